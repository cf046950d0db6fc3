"""Max-min sharing of a translation-invariant phase on one cell's flows.

The symmetry itself is found by :func:`rankmap.routing.symmetry.translation_classes` (README
"Time model"): when every node sends the same flows as the node one period further along
each dimension, max-min sharing and its re-sharing as flows finish are invariant too, and
the links of one class (the cell node they translate to, dimension and sign) carry the same
load and saturate at the same level. The phase is then solved on the cell's flows, with one
resource per link class: the weight of a flow on a class is the sum of its route's
fractions on the links of that class (each link of the class is crossed by exactly one
translate of each such route entry), with one link's capacity; the NIC ports likewise.
Every flow finishes when its representative does, exact up to the order in which
floating-point sums are taken (relative differences of about 1e-15).
"""

from __future__ import annotations

import numpy as np

from ..kernels.torus import fold_resource_classes, template_fold
from ..routing.symmetry import TranslationClasses, cell_of_nodes, translation_classes

__all__ = ["class_incidence", "template_class_incidence", "translation_classes"]


def class_incidence(machine, classes: TranslationClasses, indptr, indices, data, cap):
    """The representative flows' resource incidence folded onto resource classes.

    Parameters
    ----------
    machine : GridMachine
        The torus.
    classes : TranslationClasses
        The phase's classes (their ``period`` defines the cell).
    indptr, indices, data, cap : numpy.ndarray
        :func:`rankmap.timing.model.resource_incidence` of the representative flows (links,
        then injection and ejection ports; no memory columns).

    Returns
    -------
    indptr, indices, data, cap : numpy.ndarray
        CSR over the resource classes: per cell node, one per link direction (``2 * ndim``);
        then the cell's injection ports, then its ejection ports; each entry the sum of the
        row's fractions on the class (every resource of a class is crossed by one translate
        of each such fraction), classes in the order they first appear in the row; and the
        capacity of one resource of every class (bytes/s; ``inf`` for a class no flow
        uses).
    """
    period = classes.period
    cell_of_node = cell_of_nodes(machine, period)
    return fold_resource_classes(np.asarray(indptr, dtype=np.int64), np.asarray(indices),
                                 np.asarray(data, dtype=np.float64),
                                 np.asarray(cap, dtype=np.float64), machine.n_links,
                                 machine.n_nodes,
                                 machine.dense_slot_of_link.astype(np.int64), cell_of_node,
                                 int(np.prod(period)), 2 * len(machine.dims))


def template_class_incidence(machine, classes: TranslationClasses, templates: tuple, cap,
                             use_nic: bool):
    """:func:`class_incidence` of representative flows routed by minimal adaptive routing,
    summed from their templates one row at a time (the same result, bit for bit, without
    the flows' resource incidence ever stored).

    Parameters
    ----------
    machine : GridMachine
        The torus.
    classes : TranslationClasses
        The phase's classes (their ``period`` defines the cell).
    templates : tuple of numpy.ndarray
        :attr:`rankmap.routing.symmetry.SymmetricPhase.templates` of the representative flows.
    cap : numpy.ndarray
        Capacity of every resource (links, then injection and ejection ports, then memories),
        bytes/s, as :func:`rankmap.timing.model.resource_incidence` gives it.
    use_nic : bool
        Whether flows between two nodes also use their NIC ports.

    Returns
    -------
    indptr, indices, data, cap : numpy.ndarray
        As :func:`class_incidence` returns them.
    """
    src, dst, tid, ptr, rel, slots, shares = templates
    period = classes.period
    cell_of_node = cell_of_nodes(machine, period)
    return template_fold(src, dst, tid, ptr, rel, slots, shares, machine.dims, machine.strides,
                         np.asarray(machine.link_of_dense_slot, dtype=np.int64), bool(use_nic),
                         np.asarray(cap, dtype=np.float64), machine.n_links, machine.n_nodes,
                         np.asarray(machine.dense_slot_of_link, dtype=np.int64), cell_of_node,
                         int(np.prod(period)), 2 * len(machine.dims))
