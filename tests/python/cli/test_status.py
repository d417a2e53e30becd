from burstlab.cli import status


def test_codes_are_the_documented_contract():
    # Documented in `burstlab run --help` and the README; scripts depend on them.
    assert (status.SUCCESS, status.INTERNAL_ERROR, status.BAD_INPUT) == (0, 1, 2)
