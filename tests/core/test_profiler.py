"""core.profiler: the Chrome trace of dispatched operators, engine work and scopes."""
from __future__ import annotations

import json

import pytest

from core import cpu, engine, nd, profiler
from core.ops import dispatch


@pytest.fixture
def trace_path(tmp_path):
    prev = engine.set_engine("ThreadedEngine")  # even under KBACKEND_ENGINE_TYPE=NaiveEngine
    path = tmp_path / "out" / "trace.json"
    profiler.set_config(filename=str(path))
    yield path
    profiler.set_state("stop")
    profiler.dumps(reset=True)
    engine.set_engine(prev)


def _load(path):
    doc = json.loads(path.read_text())
    events = doc["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    return [e for e in events if e["ph"] == "X"], names


def test_trace_has_operators_engine_work_and_communication(trace_path):
    a = nd.ones((4,), ctx=cpu(0))
    b = nd.ones((4,), ctx=cpu(1))
    profiler.set_state("run")
    assert dispatch._profiling is True
    c = a * 3
    d = b + 1

    def work():
        (d * 2).wait_to_read()

    engine.push(work, read_vars=[d], ctx=cpu(1), name="replica_step", priority=2)
    with profiler.scope("allreduce w0", "communication", ctx="cpu(1)"):
        pass
    engine.wait_all()
    profiler.set_state("stop")
    assert dispatch._profiling is False
    e = c + 1  # not recorded: stopped
    profiler.dump()
    assert list(trace_path.parent.glob(".profile-*")) == []  # the temporary file was renamed
    xs, tracks = _load(trace_path)
    by_name = {}
    for ev in xs:
        by_name.setdefault(ev["name"], []).append(ev)
        assert ev["pid"] == 0 and isinstance(ev["tid"], int)
        assert ev["dur"] >= 0 and ev["ts"] >= 0
    mul = by_name["multiply"]
    assert {tracks[ev["tid"]] for ev in mul} >= {"cpu(0)", "engine:cpu(1)"}
    assert all(ev["cat"] == "operator" for ev in mul)
    assert tracks[by_name["add"][0]["tid"]] == "cpu(1)"
    assert len(by_name["add"]) == 1  # the add after set_state("stop") is absent
    step = by_name["replica_step"][0]
    assert step["cat"] == "engine" and tracks[step["tid"]] == "engine:cpu(1)"
    assert step["args"]["priority"] == 2
    inner = next(ev for ev in mul if tracks[ev["tid"]] == "engine:cpu(1)")
    assert step["ts"] <= inner["ts"] <= step["ts"] + step["dur"]  # nested in the work
    comm = by_name["allreduce w0"][0]
    assert comm["cat"] == "communication" and tracks[comm["tid"]] == "cpu(1)"
    assert e.shape == (4,)


def test_pause_resume_and_dumps(trace_path):
    x = nd.ones((2,))
    profiler.set_state("run")
    profiler.pause()
    x - 1
    profiler.resume()
    x / 2
    profiler.set_state("stop")
    names = [e["name"] for e in json.loads(profiler.dumps(reset=True))["traceEvents"]
             if e["ph"] == "X"]
    assert "divide" in names and "subtract" not in names
    assert [e for e in json.loads(profiler.dumps())["traceEvents"] if e["ph"] == "X"] == []


def test_failed_engine_work_is_marked_and_stop_costs_one_flag(trace_path):
    profiler.set_state("run")
    engine.push(lambda: 1 / 0, ctx=cpu(0), name="broken")
    with pytest.raises(engine.EngineError, match="broken"):
        engine.wait_all()
    profiler.dump(finished=True)
    assert profiler.state() == "stop" and dispatch._profiling is False
    xs, _ = _load(trace_path)
    assert [e["args"]["failed"] for e in xs if e["name"] == "broken"] == [True]
    with profiler.scope("not recorded"):
        pass
    assert json.loads(profiler.dumps())["traceEvents"] == [
        e for e in json.loads(profiler.dumps())["traceEvents"] if e["ph"] == "M"]


def test_arguments_are_checked():
    with pytest.raises(ValueError, match="'run' or 'stop'"):
        profiler.set_state("go")
    with pytest.raises(TypeError, match="unknown option"):
        profiler.set_config(filename="x.json", profile_everything=True)
    profiler.set_config(filename="profile.json", profile_all=True, aggregate_stats=False)


def test_stopped_profiler_is_not_called_by_dispatch(monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("the profiler was called while stopped")

    monkeypatch.setattr(profiler, "record_operator", fail)
    monkeypatch.setattr(profiler, "record", fail)
    assert profiler.state() == "stop" and dispatch._profiling is False
    x = nd.ones((3,)) * 2
    engine.push(lambda: (x + 1).wait_to_read(), read_vars=[x], ctx=cpu(0), name="quiet")
    engine.wait_all()
