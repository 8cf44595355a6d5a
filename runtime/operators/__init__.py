"""One stateful operator per module, each with its nested-incremental form (DESIGN 4.2-4.3).

Linear operators (select, flatmap, union, negate) need no state: `linear.py` turns them into
functions over Z-set frames, applied to deltas and to traces alike."""
