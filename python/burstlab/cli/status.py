"""Exit codes of every ``burstlab`` verb (one place, like pip's ``status_codes``)."""

#: The verb did what was asked.
SUCCESS = 0
#: A bug or an unexpected environment failure (disk full, ...); the message says "internal error".
INTERNAL_ERROR = 1
#: The user's input is wrong (scenario file, --set override, output directory); nothing written.
#: Also click's own code for usage errors, so every bad-input path exits alike.
BAD_INPUT = 2
