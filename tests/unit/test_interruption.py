"""``conformance.interruption``: SIGTERM and Ctrl-C as exceptions that cannot be lost."""

from __future__ import annotations

import gc
import signal

import pytest

from conformance.interruption import Terminated, check, exit_code, interruptible, reraise


def _deliver_inside_a_gc_callback(sig: int) -> None:
    """The signal arrives while a gc callback runs: its handler's exception is only printed."""

    def callback(phase, info):
        if phase == "start":
            signal.raise_signal(sig)

    gc.callbacks.append(callback)
    try:
        gc.collect()
    finally:
        gc.callbacks.remove(callback)


@pytest.fixture
def python_defaults():
    """Python's own dispositions for the test, whatever an earlier test in this process installed
    (an in-process SparkContext leaves its SIGINT handler behind); the earlier ones after it."""
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGTERM, before[0])
    signal.signal(signal.SIGINT, before[1])


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the lost exception, printed
@pytest.mark.parametrize("sig,raised", [(signal.SIGTERM, Terminated), (signal.SIGINT, KeyboardInterrupt)])
def test_an_interruption_lost_in_a_gc_callback_is_raised_at_the_next_check(sig, raised, python_defaults):
    with interruptible():
        assert signal.getsignal(sig) not in (signal.SIG_DFL, signal.default_int_handler)  # else it kills the test
        check()  # nothing taken yet
        _deliver_inside_a_gc_callback(sig)  # prints "Exception ignored in ..."
        with pytest.raises(raised) as err:
            check()
    assert exit_code(err.value) == 128 + sig
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    check()  # forgotten once the block is left


def test_a_handler_someone_else_installed_is_left_alone():
    mine = lambda signum, frame: None  # noqa: E731
    previous = signal.signal(signal.SIGTERM, mine)
    try:
        with interruptible():
            assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_at_the_commands_edge_sigterm_exits_143_and_ctrl_c_stays_a_keyboard_interrupt():
    with pytest.raises(SystemExit) as err:
        reraise(Terminated("SIGTERM"))
    assert err.value.code == 143
    with pytest.raises(KeyboardInterrupt) as ctrl_c:
        reraise(KeyboardInterrupt())
    assert not isinstance(ctrl_c.value, Terminated)
