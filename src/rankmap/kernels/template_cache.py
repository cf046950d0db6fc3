"""Minimal-adaptive templates kept by offset code, for the searches that route a few moved
flows at a time (:func:`rankmap.kernels.torus.adaptive_templates`).

A flow's split under minimal adaptive routing on a torus or mesh depends only on its offset
code (the module docstring of :mod:`rankmap.kernels.torus` says why), so a template worked out
once serves every later flow with that code on the same machine. ``refine`` under adaptive
routing routes about forty flows per proposal, nearly all with codes it has seen; without
the cache each proposal recomputed every template (2.5 million compiled calls in one
4,000-rank search). A cached template is the arrays the computation gave, so no result
depends on what the cache holds.
"""

from __future__ import annotations

__all__ = ["TemplateCache", "TEMPLATE_CACHE_ENTRIES"]

#: link entries (each: ndim int64 offsets, a slot and a share) a cache holds at most; once
#: full it keeps what it has and later templates are computed each time
TEMPLATE_CACHE_ENTRIES = 1 << 20


class TemplateCache:
    """The templates of one torus or mesh by offset code, up to ``max_entries`` link entries.

    Parameters
    ----------
    max_entries : int
        Link entries held at most (:data:`TEMPLATE_CACHE_ENTRIES`).

    Notes
    -----
    The owner (a router) keeps one cache per machine: codes of different machines mean
    different templates. Pickling keeps the bound, not the templates.
    """

    __slots__ = ("max_entries", "entries", "_table")

    def __init__(self, max_entries: int = TEMPLATE_CACHE_ENTRIES):
        self.max_entries = int(max_entries)
        self.entries = 0
        self._table: dict = {}

    def __len__(self) -> int:
        return len(self._table)

    def get(self, code: int):
        """The template of ``code``, or None.

        Parameters
        ----------
        code : int
            Offset code (:func:`rankmap.kernels.torus.adaptive_templates`).

        Returns
        -------
        tuple of numpy.ndarray or None
            ``(rel, slots, shares)`` as the template computation returned them.
        """
        return self._table.get(code)

    def put(self, code: int, template) -> None:
        """Keep ``template`` for ``code`` if the bound allows (read-only from then on).

        Parameters
        ----------
        code : int
            Offset code.
        template : tuple of numpy.ndarray
            ``(rel, slots, shares)``.
        """
        size = len(template[1])
        if code in self._table or self.entries + size > self.max_entries:
            return
        for a in template:
            a.flags.writeable = False
        self._table[code] = template
        self.entries += size

    def __getstate__(self):
        return {"max_entries": self.max_entries}

    def __setstate__(self, state):
        self.__init__(state["max_entries"])
