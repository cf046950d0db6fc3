"""The compiled steps of the translation-symmetry search (rankmap.kernels.translation): the
hash only proposes a period; a cell is accepted only when every node's groups match its cell
node's exactly (offset, size, multiplicity, count), whatever the hash says."""

import numpy as np
import pytest

from rankmap.kernels.translation import match_translates, translation_signature

RING = 8
DIMS = np.array([RING], dtype=np.int64)
STRIDES = np.array([1], dtype=np.int64)


def _ring_phase(steps=(1, 3)):
    """Every node of a ring of 8 sends one group to each of ``steps`` further along."""
    src = np.repeat(np.arange(RING), len(steps)).astype(np.int64)
    dst = ((src + np.tile(np.array(steps), RING)) % RING).astype(np.int64)
    return src, dst, np.ones(len(src)), np.ones(len(src))


def _match(src, dst, nbytes, mult, period=2):
    offset, _sig = translation_signature(src, dst, nbytes.view(np.uint64),
                                         mult.view(np.uint64), DIMS, STRIDES, RING)
    cell_node = (np.arange(RING) % period).astype(np.int64)
    return match_translates(src, offset, nbytes, mult, cell_node, RING)


def test_offsets_and_order_free_node_hashes():
    src, dst, nbytes, mult = _ring_phase()
    offset, sig = translation_signature(src, dst, nbytes.view(np.uint64), mult.view(np.uint64),
                                        DIMS, STRIDES, RING)
    assert offset.tolist() == [1, 3] * RING
    assert len(set(sig.tolist())) == 1                   # every node sends alike
    # a node's groups in another order: the same hash; another size: another hash
    swapped = dst.copy()
    swapped[[0, 1]] = swapped[[1, 0]]
    _o, sig2 = translation_signature(src, swapped, nbytes.view(np.uint64),
                                     mult.view(np.uint64), DIMS, STRIDES, RING)
    assert sig2[0] == sig[0]
    bigger = nbytes.copy()
    bigger[0] = 2.0
    _o, sig3 = translation_signature(src, dst, bigger.view(np.uint64), mult.view(np.uint64),
                                     DIMS, STRIDES, RING)
    assert sig3[0] != sig[0] and np.array_equal(sig3[1:], sig[1:])


def test_a_matching_phase_names_each_groups_representative():
    src, dst, nbytes, mult = _ring_phase()
    ok, rows, class_of = _match(src, dst, nbytes, mult)
    assert ok
    assert rows.tolist() == [0, 1, 2, 3]                 # the groups of cell nodes 0 and 1
    # every group's representative: the group of its cell node with its offset
    assert class_of.tolist() == [0, 1, 2, 3] * (RING // 2)


@pytest.mark.parametrize("change", ["size", "multiplicity", "extra group", "missing group",
                                    "other offset", "two sizes to one node"])
def test_any_difference_from_the_cell_node_refuses_the_cell(change):
    """Each of the first five breaks the translation by 2 at one node; the exact match
    refuses it even though it is handed the period (as if the hash had collided). The last
    is invariant, but two groups of one node to one node cannot be told apart by offset."""
    src, dst, nbytes, mult = _ring_phase()
    if change == "size":
        nbytes[10] = 5.0                                 # node 5's group to +1
    elif change == "multiplicity":
        mult[13] = 2.0                                   # node 6's group to +3
    elif change == "other offset":
        dst[13] = (6 + 2) % RING                         # node 6 sends to +2, not +3
    elif change == "missing group":                      # node 5 sends to +1 only
        src, dst, nbytes, mult = (np.delete(x, 11) for x in (src, dst, nbytes, mult))
    elif change == "extra group":
        src = np.insert(src, 10, 5)
        dst = np.insert(dst, 10, 7)
        nbytes, mult = np.ones(len(src)), np.ones(len(src))
    else:           # every node sends two sizes to its +1 neighbour: translation-invariant,
        # but groups are matched by offset alone, so the cell is refused
        src, dst, nbytes, mult = _ring_phase((1, 1, 3))
        nbytes[1::3] = 2.0
    ok, _rows, _class_of = _match(src, dst, nbytes, mult)
    assert not ok
    # with the change undone the same call accepts
    assert _match(*_ring_phase())[0]
