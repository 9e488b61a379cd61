"""Messages that may or may not be in a subscription, and what the receipts tell.

Pulsar part: four places where whether a subscription has a message is out of the history's sight. In the first
the broker decides, and what it leaves out is a *prefix* of the messages (in the order they are dispatched); in the
second the model does not know the partition, in the third which messages had reached the client, in the fourth the
broker decides message by message:

1. A non-persistent message published before any connected consumer's first flow permits reached the broker is
   dropped (``non_persistent`` rule 6: the Java and Go clients send those permits after their subscribe call has
   returned). Once permits are there, every later message goes out. So the dropped ones are the earliest.
2. An async send of a partitioned producer whose partition no flush or receipt of the history shows: the router
   had several partitions to choose from (Java ``RoundRobinPartitionMessageRouterImpl`` and C++
   ``RoundRobinMessageRouter`` start at a random partition and, batching, switch by wall clock), so the model stores
   it on the first allowed one, where it may not be (``Broker._place_unshown``). No consumer ever received it.
3. A lone consumer's seek on a non-persistent topic: its client clears its queue, and what it had not received is
   gone unless it was still on its way (``non_persistent`` rule 7).
4. A non-persistent message the broker may drop for a subscription (``non_persistent`` rule 5: a consumer out of
   permits, a connection not writable). The broker checks each message as it dispatches it, so what it drops is
   any subset, not a prefix: such a message is *maybe dropped*, and its receipt tells nothing of the others.

The model keeps both outcomes: such a message is *maybe absent*, neither owed nor refused, until a receipt decides
(``resolve``):

- a received message of the run shows the subscription has it, and with it every later one of the run that is not
  maybe dropped (place 4: a maybe-dropped message is shown present by its own receipt only);
- where one consumer takes the subscription's messages in order (an Exclusive or Failover subscription, or one
  consumer connected), a received message shows the maybe-absent ones before it absent, and a receive that waited
  past one's due time and got nothing shows it absent;
- on a Key_Shared subscription a received message shows the maybe-absent ones of its sticky key before it absent
  (one key's messages go out in order, PLS-KEYSHARED-007);
- otherwise, with several consumers sharing the messages, an earlier one may sit with another consumer: nothing
  more is told;
- at the end of a history what is still undecided may have been absent, so nothing owes it.

Not here: a subscription created at Latest while async sends are in flight. Which of them the broker stored before
the cursor is a prefix of one producer's, but a later message of another producer may be stored before them (live
4.0.8, python campaign of 5 Dec 2026: p1's async m1 in flight at c2's Latest subscribe, p2's batch stored before m1,
c2 got m2..m4 and then m1), so an order inferred from the model's positions would be wrong; the checker follows
what the subscription's consumers received instead (``FeatureOps.latest_start_in_flight``). A batching producer's
open batch: ``batching``'s timer split, PLS-BATCH-009.
Choices: positions are the model's; a message's due time is the caller's (``Broker.observe_presence``: when the
dispatcher would have owed it to the consumer that asked, plus the dispatch slack).
"""

from __future__ import annotations

from typing import Callable, Mapping


def resolve(maybe: set[int] | frozenset[int], received: int | None, *, ordered: bool, asked_until: float,
            due: Mapping[int, float],
            ordered_pair: Callable[[int, int], bool] = lambda q, p: False,
            dropped: set[int] | frozenset[int] = frozenset()) -> tuple[frozenset[int], frozenset[int]]:
    """What one receipt tells of a subscription's maybe-absent positions: ``(absent, settled)``, both subsets of
    ``maybe`` (``absent`` within ``settled``; the rest of ``settled`` is present). ``received``: a position of the
    subscription some consumer received (None: a receive that got nothing, ending at ``asked_until``); ``ordered``:
    one consumer takes the subscription's messages in position order (the model's store order, which follows the
    ids the history shows); ``ordered_pair(q, p)``: whether, without that, ``q`` still comes before ``p`` to whoever
    gets ``p`` (one Key_Shared sticky key); ``due``: by when each maybe-absent position would have arrived;
    ``dropped``: the maybe-dropped ones (place 4), which a receipt of another message never shows present."""
    if received is None:
        absent = frozenset(q for q in maybe if due[q] <= asked_until) if ordered else frozenset()
        return absent, absent
    absent = frozenset(q for q in maybe if q < received and (ordered or ordered_pair(q, received)))
    present = frozenset(q for q in maybe if q == received or (q > received and q not in dropped)) \
        if received in maybe else frozenset()
    return absent, absent | present
