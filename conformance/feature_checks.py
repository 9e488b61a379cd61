"""The checker's judgements of the feature rules: what a send, a flush or a producer creation returned.

Called by ``conformance.checker`` after the model applied the op with the observed value, so
each function compares the model's prediction (the op's ok value in the model, which carries the
feature facts: ``duplicate``, ``chunks``, ``entries``, ...) with what the target reported.
Rule ids: PLS-DEDUP-001..006, PLS-BATCH-001/002/003/007, PLS-CHUNK-002/005, PLS-DELAY-006,
PLS-NP-003.

Ids are compared *relative* to the first entry a flush wrote (``feature_state.relative_ids``):
ledger and entry numbers are the broker's to choose, the shape of the batches is not.

Not modelled: see ``reference_model.feature_state``.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Mapping

from conformance.verdicts import FAIL, PASS
from reference_model.feature_state import relative_ids


Emit = Callable[..., None]  # the checker's _emit(rule, step, status, anomaly, allowed, observed, explanation)

_ID_TEXT = re.compile(r"^\((-?\d+),(-?\d+),(-?\d+),(-?\d+)\)(?:;\((-?\d+),(-?\d+),(-?\d+),(-?\d+)\))?$")


def chunks_of(id_text: str) -> int | None:
    """How many entries an id text spans: '(l,e,p,b)' is 1, '(l,a,p,b);(l,z,p,b)' is z - a + 1."""
    m = _ID_TEXT.match(id_text or "")
    if m is None:
        return None
    if m.group(5) is None:
        return 1
    return int(m.group(6)) - int(m.group(2)) + 1


def _status(ok: bool) -> str:
    return PASS if ok else FAIL


def check_producer(emit: Emit, step: int, predicted: Mapping[str, Any], observed: Mapping[str, Any], args: Mapping[str, Any]) -> None:
    """PLS-DEDUP-002/003 (last_sequence_id of a re-created producer), PLS-ACCESS-005 (pending)."""
    rule = predicted.get("sequence_rule")
    if rule and "last_sequence_id" in observed:
        ok = observed["last_sequence_id"] == predicted["last_sequence_id"]
        emit(rule, step, _status(ok), None if ok else "wrong-value",
             f"last_sequence_id {predicted['last_sequence_id']}", f"last_sequence_id {observed['last_sequence_id']}",
             predicted.get("sequence_reason", ""))
    if predicted.get("pending") is not None:
        ok = bool(observed.get("pending")) == bool(predicted["pending"])
        emit("PLS-ACCESS-005", step, _status(ok), None if ok else "wrong-value",
             f"pending {predicted['pending']}", f"pending {bool(observed.get('pending'))}",
             "A WaitForExclusive producer waits while another producer holds the topic, and completes at once otherwise.")


def check_send(emit: Emit, step: int, predicted: Mapping[str, Any], observed: Mapping[str, Any], args: Mapping[str, Any]) -> None:
    """A synchronous send: duplicate or stored (PLS-DEDUP-*), its sequence id, chunk count and id text."""
    label = args["payload"]
    if "sequence_id" in observed and "sequence_id" in predicted:
        ok = observed["sequence_id"] == predicted["sequence_id"]
        rule = predicted.get("sequence_rule", "PLS-DEDUP-006")
        emit(rule, step, _status(ok), None if ok else "wrong-value",
             f"sequence_id {predicted['sequence_id']}", f"sequence_id {observed['sequence_id']}",
             f"{label}: last_sequence_id follows every acknowledged send"
             + ("" if ok else f"; it should be {predicted['sequence_id']}, it is {observed['sequence_id']}") + ".")
    if predicted.get("duplicate") is not None and "message_id" in observed:
        dup = list(observed["message_id"][:2]) == [-1, -1]
        ok = dup == predicted["duplicate"]
        rule = predicted.get("dedup_rule", "PLS-DEDUP-001")
        emit(rule, step, _status(ok), None if ok else "wrong-value",
             "id (-1,-1,-1,-1): not stored" if predicted["duplicate"] else "a stored message's id",
             str(observed["message_id"]), predicted.get("dedup_reason", ""))
    if predicted.get("chunks") and observed.get("id_text"):
        got = chunks_of(str(observed["id_text"]))
        ok = got == predicted["chunks"]
        emit("PLS-CHUNK-002", step, _status(ok), None if ok else "wrong-value",
             f"{predicted['chunks']} entr{'y' if predicted['chunks'] == 1 else 'ies'}", f"id {observed['id_text']}",
             f"{label}: {predicted.get('chunk_reason', '')}" + ("" if ok else f" The id spans {got} entries."))
        if predicted["chunks"] > 1:
            mid = observed.get("message_id") or [None, None]
            last_ok = got is not None and mid[1] is not None and str(observed["id_text"]).endswith(f",{mid[1]},{mid[2]},{mid[3]})")
            emit("PLS-CHUNK-005", step, _status(last_ok), None if last_ok else "wrong-value",
                 "'(first chunk id);(last chunk id)', ledger/entry of the last chunk", f"{observed['id_text']} / {mid}",
                 f"{label} was chunked; its id prints as first;last chunk and carries the last chunk's position.")
    if predicted.get("non_persistent") and "message_id" in observed:
        ok = list(observed["message_id"])[:2] == [0, 0] and observed["message_id"][3] == -1
        emit("PLS-NP-003", step, _status(ok), None if ok else "wrong-value", "[0, 0, partition, -1]",
             str(observed["message_id"]), f"{label} went to a non-persistent topic, whose ids are all (0,0,p,-1).")


def check_flush(emit: Emit, step: int, predicted: Mapping[str, Any], observed: Mapping[str, Any]) -> None:
    """The ids of the messages a flush wrote, relative to the first entry (PLS-BATCH-001/002/003/007, PLS-DELAY-006)."""
    want = {k: tuple(v) for k, v in (predicted.get("relative_ids") or {}).items()}
    got_ids = {k: v for k, v in (observed.get("message_ids") or {}).items() if k in want and list(v)[:2] != [-1, -1]}
    got = relative_ids(got_ids)
    if not want:
        return
    diffs = [f"{label}: (entry +{got.get(label, ('?', '?'))[0]}, index {got.get(label, ('?', '?'))[1]}), expected "
             f"(entry +{w[0]}, index {w[1]})" for label, w in want.items() if got.get(label) != w]
    ok = not diffs
    for rule in predicted.get("rules") or ("PLS-BATCH-001",):
        emit(rule, step, _status(ok), None if ok else "wrong-value",
             ", ".join(f"{k} +{v[0]}/{v[1]}" for k, v in want.items()), ", ".join(f"{k} +{v[0]}/{v[1]}" for k, v in got.items()),
             predicted.get("reason", "") if ok else "The flush wrote other entries than the batch rules say: " + "; ".join(diffs) + ".")
