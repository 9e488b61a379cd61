"""The checker's judgements of the feature rules: what a send, a flush or a producer creation returned.

Called by ``conformance.checker`` after the model applied the op with the observed value, so
each function compares the model's prediction (the op's ok value in the model, which carries the
feature facts: ``duplicate``, ``chunks``, ``entries``, ...) with what the target reported.
Rule ids: PLS-DEDUP-001..006, PLS-BATCH-001/002/003/007/009, PLS-CHUNK-002/005/007, PLS-DELAY-006,
PLS-NP-003.

Ids are compared *relative* to the first entry a flush wrote (``feature_state.relative_ids``):
ledger and entry numbers are the broker's to choose, the shape of the batches is not.

Not modelled: see ``reference_model.feature_state``.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Mapping

from conformance.verdicts import FAIL, INDETERMINATE, PASS
from reference_model.feature_state import relative_ids


Emit = Callable[..., None]  # the checker's _emit(rule, step, status, anomaly, allowed, observed, explanation)

_ID_TEXT = re.compile(r"^\((-?\d+),(-?\d+),(-?\d+),(-?\d+)\)(?:;\((-?\d+),(-?\d+),(-?\d+),(-?\d+)\))?$")


# The Java client's MessageId.toString: "ledger:entry:partition", ":batch" when batched
_JAVA_ID_TEXT = re.compile(r"^(-?\d+):(-?\d+):(-?\d+)(?::(-?\d+))?$")


def chunks_of(id_text: str) -> int | None:
    """How many entries an id text spans: '(l,e,p,b)' is 1, '(l,a,p,b);(l,z,p,b)' is z - a + 1;
    the Java client's 'l:e:p' is 1 and 'l:a:p;l:z:p' is z - a + 1. None: a text not read here."""
    java = [_JAVA_ID_TEXT.match(part) for part in (id_text or "").split(";")]
    if all(java) and len(java) in (1, 2):
        return 1 if len(java) == 1 else int(java[1].group(2)) - int(java[0].group(2)) + 1
    m = _ID_TEXT.match(id_text or "")
    if m is None:
        return None
    if m.group(5) is None:
        return 1
    return int(m.group(6)) - int(m.group(2)) + 1


# PLS-ACCESS-005: how long a producer creation nobody holds back may take. Measured in the issue-16 campaigns
# on 4.0.8 (2026-11-27; 14 174 creations): p99 61-73 ms, p99.9 135-244 ms, the slowest 1 077 ms (a cold
# topic load); twice that. A WaitForExclusive creation still pending after a shorter wait says nothing.
UNHINDERED_CREATION_MS = 2000


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
        waited = bool(observed.get("pending"))
        ok = waited == bool(predicted["pending"])
        wait_ms = int(args.get("wait_ms", 0))
        if not ok and waited and wait_ms < UNHINDERED_CREATION_MS:
            emit("PLS-ACCESS-005", step, INDETERMINATE, None, "pending False", "pending True",
                 f"No other producer holds the topic, so the creation completes without waiting; it had not completed "
                 f"after wait_ms={wait_ms}, which is shorter than the {UNHINDERED_CREATION_MS} ms an unhindered creation "
                 f"(a topic load included) may take, so a slow creation cannot be told from a wait.")
            return
        emit("PLS-ACCESS-005", step, _status(ok), None if ok else "wrong-value",
             f"pending {predicted['pending']}", f"pending {waited}",
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
        status = _status(ok) if got is not None else INDETERMINATE  # a format this check does not read says nothing
        emit(predicted.get("chunk_rule", "PLS-CHUNK-002"), step, status, None if ok or got is None else "wrong-value",
             f"{predicted['chunks']} entr{'y' if predicted['chunks'] == 1 else 'ies'}", f"id {observed['id_text']}",
             f"{label}: {predicted.get('chunk_reason', '')}" + ("" if ok else f" The id spans {got} entries."))
        if predicted["chunks"] > 1:
            mid = observed.get("message_id") or [None, None]
            text = str(observed["id_text"])
            # the C++ client prints '(l,e,p,b);(l,e,p,b)', the Java and Go clients 'l:e:p;l:e:p' (ChunkMessageIdImpl,
            # chunkMessageID.String); Go's p is 0 on a topic that is not partitioned (the model's id_text_partition)
            shown = predicted.get("id_text_partition", mid[2])
            last_ok = got is not None and mid[1] is not None and (
                text.endswith(f",{mid[1]},{mid[2]},{mid[3]})") or text.endswith(f";{mid[0]}:{mid[1]}:{shown}"))
            emit("PLS-CHUNK-005", step, _status(last_ok), None if last_ok else "wrong-value",
                 "'(first chunk id);(last chunk id)', ledger/entry of the last chunk", f"{observed['id_text']} / {mid}",
                 f"{label} was chunked; its id prints as first;last chunk and carries the last chunk's position.")
    if predicted.get("non_persistent") and "message_id" in observed:
        index = int(predicted.get("np_batch_index", -1))  # a message of a batch keeps its index
        partition = predicted.get("np_partition")
        ok = list(observed["message_id"])[:2] == [0, 0] and observed["message_id"][3] == index and (
            partition is None or observed["message_id"][2] == partition)
        shown = "partition" if partition is None else partition
        emit("PLS-NP-003", step, _status(ok), None if ok else "wrong-value", f"[0, 0, {shown}, {index}]",
             str(observed["message_id"]), f"{label} went to a non-persistent topic, whose ids are (0,0,{shown},{index}) "
             f"({'alone' if index < 0 else 'in a batch'}).")


def _entry_key(args: Mapping[str, Any]) -> str:
    """PLS-BATCH-003: the key a KeyBased container groups by (ordering key, else partition key; keyless: '')."""
    return str(args.get("ordering_key") or args.get("key") or "")


def _flush_breaks(want: Mapping[str, tuple[int, int]], got: Mapping[str, tuple[int, int]], rules: list[str],
                  sends: Mapping[str, Mapping[str, Any]]) -> dict[str, list[str]]:
    """Which of the flush rules the observed ids break, each with what it saw (rule -> differences).

    Each rule is judged on the part of the ids it states: PLS-DELAY-006 where a delayed message
    lies (alone, index -1, with the same messages written before it); PLS-BATCH-007 that a
    non-batching producer's messages are each alone with index -1; PLS-BATCH-001 that each
    entry's messages carry indexes 0..n-1 in send order; PLS-BATCH-003 that KeyBased entries hold
    one key each and go out in the planned key order; PLS-BATCH-002 which (non-delayed) messages
    share an entry. A difference none of them states is charged to the first rule the model names (for a
    non-batching producer, only entries out of send order: the gaps between them are other writers')."""
    order = {label: i for i, label in enumerate([x for x in sends if x in want] + [x for x in want if x not in sends])}
    delayed = {x for x in want if {"deliver_after_ms", "deliver_at_ms"} & set(sends.get(x, {}))}
    batching = "PLS-BATCH-001" in rules

    def entries(ids: Mapping[str, tuple[int, int]]) -> dict[int, list[str]]:
        out: dict[int, list[str]] = {}
        for label in sorted(ids, key=lambda x: order.get(x, len(order))):
            out.setdefault(ids[label][0], []).append(label)
        return dict(sorted(out.items()))

    w_entries, g_entries = entries(want), entries(got)
    broken: dict[str, list[str]] = {}
    if set(got) != set(want):
        broken.setdefault(rules[0], []).append(f"labels {sorted(set(want) ^ set(got))} missing or extra")
    for d in sorted(delayed & set(got)):  # PLS-DELAY-006: alone, at once, ahead of the open batch
        before_w = {x for x in want if want[x][0] < want[d][0]}
        before_g = {x for x in got if got[x][0] < got[d][0]}
        if g_entries[got[d][0]] != [d] or got[d][1] != -1:
            broken.setdefault("PLS-DELAY-006", []).append(f"{d} (delayed) shares an entry or has batch index {got[d][1]}")
        elif before_w != before_g:
            broken.setdefault("PLS-DELAY-006", []).append(f"{d} (delayed) written after {sorted(before_g)}, "
                                                          f"expected after {sorted(before_w)}")
    plain = {e: [x for x in labels if x not in delayed] for e, labels in g_entries.items()}
    if not batching:  # PLS-BATCH-007
        for labels in plain.values():
            if len(labels) > 1 or any(got[x][1] != -1 for x in labels):
                broken.setdefault("PLS-BATCH-007", []).append(f"{', '.join(labels)} written as a batch")
    else:
        for labels in g_entries.values():  # PLS-BATCH-001 (a batch of one: index 0, unless sent as a plain message)
            if len(labels) > 1 and [got[x][1] for x in labels] != list(range(len(labels))):
                broken.setdefault("PLS-BATCH-001", []).append(
                    f"entry of {', '.join(labels)} has indexes {[got[x][1] for x in labels]}, expected 0..{len(labels) - 1} in send order")
            elif len(labels) == 1 and labels[0] in want and want[labels[0]][1] >= 0 and got[labels[0]][1] != 0:
                broken.setdefault("PLS-BATCH-001", []).append(f"{labels[0]} alone with index {got[labels[0]][1]}, expected 0")
        if "PLS-BATCH-003" in rules:
            w_keys = [_entry_key(sends.get(x[0], {})) for x in entries({k: v for k, v in want.items() if k not in delayed}).values()]
            g_keys = []
            for labels in plain.values():
                keys = {_entry_key(sends.get(x, {})) for x in labels}
                if len(keys) > 1:
                    broken.setdefault("PLS-BATCH-003", []).append(f"one entry holds keys {sorted(keys)}")
                if labels:
                    g_keys.append(_entry_key(sends.get(labels[0], {})))
            if g_keys != w_keys:
                broken.setdefault("PLS-BATCH-003", []).append(f"entries by key {g_keys}, expected {w_keys}")
        partition = lambda es: sorted(sorted(x for x in labels if x not in delayed) for labels in es.values()
                                      if any(x not in delayed for x in labels))
        if partition(g_entries) != partition(w_entries):  # PLS-BATCH-002
            broken.setdefault("PLS-BATCH-002" if "PLS-BATCH-002" in rules else rules[0], []).append(
                f"entries {partition(g_entries)}, expected {partition(w_entries)}")
    if not broken and not batching:
        # PLS-BATCH-007 states that each message is alone, not how far apart they lie: the entries between a plain
        # producer's messages are other writers' (another producer's batch may leave by its timer before or after
        # them, which the model leaves open until that producer's flush: regression
        # pls-batch-007-wrong-value-93c7d57c070f). Only their order is charged here.
        sent_order = sorted(got, key=lambda x: order.get(x, len(order)))
        if [got[x][0] for x in sent_order] != sorted(got[x][0] for x in sent_order):
            broken.setdefault(rules[0], []).append("entries out of send order")
    elif not broken and any(got.get(x) != w for x, w in want.items()):
        java_single = [x for x in want if x not in delayed and batching and want[x][1] == -1
                       and len(w_entries[want[x][0]]) == 1 and got.get(x, (None, -1))[1] != -1]
        if {x for x, w in want.items() if got.get(x) != w} - set(java_single):
            broken.setdefault(rules[0], []).append("entry offsets differ from the plan")
    return broken


def _dense(ids: Mapping[str, tuple[int, int]], partition_of: Mapping[str, int]) -> dict[str, tuple[int, int]]:
    """Entry offsets replaced by their rank among the offsets on the same partition: what a flush's ids say of the
    order and grouping of its entries without their distance."""
    ranks: dict[tuple[int, int], int] = {}
    for partition in set(partition_of.get(k, -1) for k in ids):
        offsets = sorted({v[0] for k, v in ids.items() if partition_of.get(k, -1) == partition})
        ranks.update({(partition, o): r for r, o in enumerate(offsets)})
    return {k: (ranks[(partition_of.get(k, -1), v[0])], v[1]) for k, v in ids.items()}


def _check_flush_np_ids(emit: Emit, step: int, predicted: Mapping[str, Any], observed: Mapping[str, Any]) -> None:
    """PLS-NP-003 for the ids a flush reports of non-persistent sends (``predicted``: label -> the model's id): each is
    (0, 0, partition, index), the partition the one its sender reports; the index -1 from a producer that does not
    batch, and from one that does the split's (``None``: not judged)."""
    for label, want in predicted.items():
        got = observed.get(label)
        if got is None:
            continue
        index = want[3] if len(want) > 3 else None
        ok = list(got)[:3] == [0, 0, want[2]] and (index is None or list(got)[3:4] == [index])
        shown = "index" if index is None else index
        emit("PLS-NP-003", step, _status(ok), None if ok else "wrong-value", f"[0, 0, {want[2]}, {shown}]", str(list(got)),
             f"{label} went to a non-persistent topic, whose ids are (0,0,{want[2]},{shown})"
             + (" (its producer does not batch)" if index == -1 else "") + ("." if ok else f"; the flush reported {list(got)}."))


def check_flush(emit: Emit, step: int, predicted: Mapping[str, Any], observed: Mapping[str, Any],
                sends: Mapping[str, Mapping[str, Any]] | None = None, *, gaps_unknown: bool = False) -> None:
    """The ids of the messages a flush wrote, relative to the first entry (PLS-BATCH-001/002/003/007, PLS-DELAY-006),
    and a non-persistent message's id (PLS-NP-003, ``_check_flush_np_ids``).

    ``sends``: label -> send args, in send order (the keys, delays and order the rules speak of).
    A Java batch of one written with index 0 is PLS-BATCH-008's (``detectors.batch_of_one``).
    ``gaps_unknown``: the broker stored messages on the topic that the model did not follow (a send it could not
    follow), so how many entries lie between two of this flush's is unknown: the entries are judged by their order
    and members, not by their distance (``_dense``)."""
    _check_flush_np_ids(emit, step, predicted.get("np_ids") or {}, observed.get("message_ids") or {})
    got_ids = {k: v for k, v in (observed.get("message_ids") or {}).items() if list(v)[:2] != [-1, -1]}
    # PLS-DEDUP-004: a message resent after an Unknown duplicate may be reported as a duplicate
    resent = set(predicted.get("may_report_duplicate") or ()) - set(got_ids)
    want = {k: tuple(v) for k, v in (predicted.get("relative_ids") or {}).items() if k not in resent}
    got_ids = {k: v for k, v in got_ids.items() if k in want}
    got = relative_ids(got_ids)
    if not want:
        return
    if gaps_unknown:
        partition_of = {label: int(mid[2]) for label, mid in got_ids.items()}
        want, got = _dense(want, partition_of), _dense(got, partition_of)
    rules = list(predicted.get("rules") or ("PLS-BATCH-001",))
    on = {label: int(mid[2]) for label, mid in got_ids.items()}  # the partition each id names (-1: not partitioned)
    if len(set(on.values())) > 1:
        # a partitioned producer's flush: each partition is a topic of its own, with its own entries (relative_ids
        # counts offsets per partition), so each partition's ids are judged on their own
        broken: dict[str, list[str]] = {}
        missing = set(want) - set(on)
        if missing:
            broken.setdefault(rules[0], []).append(f"labels {sorted(missing)} missing or extra")
        for partition in sorted(set(on.values())):
            mine = {k for k, p in on.items() if p == partition}
            for rule, whys in _flush_breaks({k: v for k, v in want.items() if k in mine},
                                            {k: v for k, v in got.items() if k in mine}, rules, sends or {}).items():
                broken.setdefault(rule, []).extend(f"on partition {partition}: {why}" for why in whys)
    else:
        broken = _flush_breaks(want, got, rules, sends or {})
    for rule, why in predicted.get("split_violations") or ():  # PLS-BATCH-009: batching.match_split's reading
        broken.setdefault(rule, []).append(why)
    for rule in list(dict.fromkeys(rules + list(broken))):
        ok = rule not in broken
        emit(rule, step, _status(ok), None if ok else "wrong-value",
             ", ".join(f"{k} +{v[0]}/{v[1]}" for k, v in want.items()), ", ".join(f"{k} +{v[0]}/{v[1]}" for k, v in got.items()),
             predicted.get("reason", "") if ok else
             f"Let the batch rules plan this flush as {', '.join(f'{k} +{v[0]}/{v[1]}' for k, v in want.items())} "
             f"(entry offset / batch index). Then the ids keep what {rule} states; they do not: "
             + "; ".join(broken[rule]) + ".")
