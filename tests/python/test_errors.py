import pickle

import pytest

import burstlab
from helpers import BAD_CCA_SCENARIO
from burstlab.errors import BurstlabError, OutputExistsError, ScenarioError


def test_hierarchy_every_error_is_a_burstlab_error():
    assert issubclass(ScenarioError, BurstlabError)
    assert issubclass(OutputExistsError, BurstlabError)
    # Built-in bases keep generic handlers working.
    assert issubclass(ScenarioError, ValueError)
    assert issubclass(OutputExistsError, FileExistsError)


def test_scenario_error_carries_message_and_kind():
    err = ScenarioError('scenario.seed = "x": expected an integer', "invalid_value")
    assert str(err) == 'scenario.seed = "x": expected an integer'
    assert err.kind == "invalid_value"


def test_scenario_error_survives_pickling_to_a_worker():
    err = pickle.loads(pickle.dumps(ScenarioError("m", "syntax")))
    assert (type(err), err.message, err.kind) == (ScenarioError, "m", "syntax")


def test_package_exports_errors_at_top_level():
    assert burstlab.ScenarioError is ScenarioError
    assert burstlab.BurstlabError is BurstlabError


def test_core_raises_the_python_class_with_a_kind():
    with pytest.raises(ScenarioError) as info:
        burstlab._core.run(BAD_CCA_SCENARIO, [])
    assert isinstance(info.value.kind, str) and info.value.kind
    assert "cca" in str(info.value)
