"""The throwaway-namespace reaper (fixtures/namespaces.py): a run's namespace is deleted only
once SETTLE_S have passed since the run ended, by a later run or at exit. Virtual time; the
admin here records the DELETEs it is asked for (the live half is in
tests/live/test_harness.py, against the broker)."""

from __future__ import annotations

import pytest

from fixtures.errors import AdminError
from fixtures.namespaces import SETTLE_S, NamespaceReaper


class Clock:
    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


class RecordingAdmin:
    def __init__(self, refuse: dict[str, int] | None = None) -> None:
        self.deleted: list[str] = []
        self.refuse = refuse or {}

    def delete_namespace(self, namespace: str, *, force: bool = True) -> None:
        if namespace in self.refuse:
            raise AdminError("DELETE", f"/admin/v2/namespaces/{namespace}", self.refuse[namespace], "refused")
        assert force
        self.deleted.append(namespace)


def reaper(clock: Clock) -> NamespaceReaper:
    return NamespaceReaper("http://127.0.0.1:1", clock=clock, sleep=clock.sleep)


def test_a_namespace_is_not_deleted_when_its_run_ends():
    clock, admin = Clock(), RecordingAdmin()
    r = reaper(clock)
    r.retire("public/a", admin)
    assert admin.deleted == []
    assert [ns for ns, _ in r.pending] == ["public/a"]


def test_a_later_run_deletes_the_namespaces_that_have_settled_and_keeps_the_young_ones():
    clock, admin = Clock(), RecordingAdmin()
    r = reaper(clock)
    r.retire("public/a", admin)
    clock.now += SETTLE_S - 0.5
    r.retire("public/b", admin)
    assert admin.deleted == []  # a is 4.5 s old
    clock.now += 0.5
    r.retire("public/c", admin)
    assert admin.deleted == ["public/a"]
    assert [ns for ns, _ in r.pending] == ["public/b", "public/c"]


def test_at_exit_everything_is_deleted_after_the_youngest_has_settled():
    clock, admin = Clock(), RecordingAdmin()
    r = reaper(clock)
    r.retire("public/a", admin)
    clock.now += 2.0
    r.retire("public/b", admin)
    assert r.reap(admin, everything=True) == ["public/a", "public/b"]
    assert clock.slept == [pytest.approx(SETTLE_S)]  # b had just retired
    assert r.pending == []


def test_a_refused_deletion_warns_and_the_others_are_still_deleted():
    clock, admin = Clock(), RecordingAdmin(refuse={"public/a": 409})
    r = reaper(clock)
    r.retire("public/a", admin)
    r.retire("public/b", admin)
    clock.now += SETTLE_S
    with pytest.warns(UserWarning, match=r"1 throwaway namespace\(s\) could not be deleted.*public/a .*HTTP 409"):
        assert r.reap(admin) == ["public/b"]
    assert r.pending == []


def test_every_namespace_left_is_named_in_one_warning():
    clock, admin = Clock(), RecordingAdmin(refuse={"public/a": 409, "public/b": 500})
    r = reaper(clock)
    for ns in ("public/a", "public/b", "public/c"):
        r.retire(ns, admin)
    clock.now += SETTLE_S
    with pytest.warns(UserWarning, match=r"2 throwaway namespace\(s\).*public/a .*public/b ") as caught:
        assert r.reap(admin) == ["public/c"]
    assert len(caught) == 1


def test_a_broker_that_does_not_answer_is_not_reported():
    """HTTP 0 (no answer: a killed broker, a read timeout) says nothing about the run; the run itself
    reports a dead broker (tests/live/test_broker_death.py asserts no 'Connection refused' in stderr)."""
    import warnings

    clock, admin = Clock(), RecordingAdmin(refuse={"public/a": 0})
    r = reaper(clock)
    r.retire("public/a", admin)
    r.retire("public/b", admin)
    clock.now += SETTLE_S
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert r.reap(admin) == ["public/b"]
    assert r.pending == []


def test_a_stopped_broker_leaves_nothing_to_delete():
    clock, admin = Clock(), RecordingAdmin()
    r = reaper(clock)
    r.retire("public/a", admin)
    r.forget()
    clock.now += SETTLE_S
    assert r.reap(admin, everything=True) == []
    assert admin.deleted == [] and clock.slept == []
