"""A verb's docstring as the Markdown its ``--help`` renders: prose reflows to the terminal, and
each example line stays a line of its own.

typer renders help as Markdown after dedenting all but the first line of the text below the
first paragraph, so an example block that opens that text loses its indentation and folds into
one paragraph with the lines after it, and an example after a bullet list becomes part of the
list's last item. A fenced code block has neither problem, so every indented block becomes one;
an example line too long for the terminal is broken before an option, with a shell
continuation (`` \\``), so what is shown can still be pasted.
"""

from __future__ import annotations

import inspect
import re

__all__ = ["to_markdown", "code_width"]

#: Columns the help layout takes around a code block: typer pads the help text by one column
#: on each side, rich's code block by one more.
_MARGIN = 4
#: A shell word: quoted parts and unquoted characters up to whitespace.
_WORD = re.compile(r"""(?:'[^']*'|"(?:\\.|[^"\\])*"|\\.|[^\s'"\\])+|['"\\]""")
#: How far a continuation line is indented beyond its command.
_CONTINUATION = "    "


def code_width(console_width: int) -> int:
    """The columns an example line may take in help printed ``console_width`` wide."""
    return max(console_width - _MARGIN, 20)


def to_markdown(doc: str, width: int) -> str:
    """``doc`` (a docstring) with each block of lines indented beyond the prose turned into a
    fenced code block whose lines are at most ``width`` columns where a break is possible."""
    lines = inspect.cleandoc(doc).splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        # As in Markdown, an indented block follows a blank line: it does not continue prose.
        if not _indented(lines[i]) or (i > 0 and lines[i - 1].strip()):
            out.append(lines[i])
            i += 1
            continue
        block = []
        while i < len(lines) and (_indented(lines[i]) or (not lines[i].strip() and _block_goes_on(lines, i))):
            block.append(lines[i])
            i += 1
        out += ["```text", *_code_lines(block, width), "```"]
        if i < len(lines) and lines[i].strip():
            out.append("")
    return "\n".join(out)


def _indented(line: str) -> bool:
    return line.startswith("    ") and bool(line.strip())


def _block_goes_on(lines: list[str], i: int) -> bool:
    """A blank line inside a code block: the next non-blank line is indented too."""
    rest = next((line for line in lines[i:] if line.strip()), "")
    return _indented(rest)


def _code_lines(block: list[str], width: int) -> list[str]:
    margin = min(len(line) - len(line.lstrip()) for line in block if line.strip())
    out: list[str] = []
    quoted = False  # inside a quoted string that goes on over lines: no break is safe there
    for line in block:
        line = line[margin:].rstrip()
        whole = not quoted and _balanced(line)
        out += _break(line, width) if whole else [line]
        quoted ^= not _balanced(line)
    return out


def _balanced(line: str) -> bool:
    """Whether every quote the shell would see in ``line`` is closed on it."""
    return all(m.group(0) not in ("'", '"') for m in _WORD.finditer(line))


def _break(line: str, width: int) -> list[str]:
    """``line`` as lines of at most ``width`` columns where it can be broken: between shell
    words, an option kept with the values after it; each line but the last ends in `` \\`` and
    the ones after the first are indented. A longer word stays whole (the terminal wraps it)."""
    if len(line) <= width:
        return [line]
    indent = line[: len(line) - len(line.lstrip())]
    lines: list[str] = []
    current = ""
    units = _units([m.group(0) for m in _WORD.finditer(line)])
    for k, unit in enumerate(units):
        room = width - (0 if k == len(units) - 1 else 2)
        if not current:
            current = indent + unit
        elif len(current) + 1 + len(unit) <= room:
            current += " " + unit
        else:
            lines.append(current + " \\")
            current = indent + _CONTINUATION + unit
    return [*lines, current]


def _units(words: list[str]) -> list[str]:
    """The pieces a command line may be broken between: each word before the first option, then
    each option with the values that follow it; a ``# comment`` is one piece."""
    units: list[str] = []
    in_option = False
    for k, word in enumerate(words):
        if word.startswith("#"):
            units.append(" ".join(words[k:]))
            break
        if word.startswith("-"):
            units.append(word)
            in_option = True
        elif in_option:
            units[-1] += " " + word
        else:
            units.append(word)
    return units
