"""Replays of the C++ standard library's selection and sorting steps (GCC's libstdc++, which
torch's Linux wheels use). torch's CPU topk orders (value, index) pairs with
``std::partial_sort`` or ``std::nth_element`` + ``std::sort`` comparing values only, so which
of several equal values come first depends on how those algorithms move elements; callers
replay them only on rows where equal values make that matter."""

import math


class StdSelect:
    """Replays libstdc++'s ``partial_sort``/``nth_element`` selection (as torch's topk
    calls them) over ``(value, index)`` pairs, to learn which indices end up in front."""

    def __init__(self, values, largest):
        self.items = [(v, i) for i, v in enumerate(values)]
        isnan = math.isnan
        if largest:  # NaN ranks above everything, as in torch
            self.less = lambda x, y: (isnan(x[0]) and not isnan(y[0])) or x[0] > y[0]
        else:
            self.less = lambda x, y: (not isnan(x[0]) and isnan(y[0])) or x[0] < y[0]

    def first(self, k):
        """The (sorted) indices of the ``k`` pairs the selection leaves in front."""
        n = len(self.items)
        if k * 64 <= n:
            self._heap_select(0, k, n)
        else:
            self._nth_element(k - 1)
        return sorted(i for _, i in self.items[:k])

    def _sift(self, first, hole, length, value):
        # libstdc++'s __adjust_heap: move the hole down to a leaf, then push ``value`` up
        a, less = self.items, self.less
        top = child = hole
        while child < (length - 1) // 2:
            child = 2 * (child + 1)
            if less(a[first + child], a[first + child - 1]):
                child -= 1
            a[first + hole] = a[first + child]
            hole = child
        if length % 2 == 0 and child == (length - 2) // 2:
            child = 2 * (child + 1)
            a[first + hole] = a[first + child - 1]
            hole = child - 1
        parent = (hole - 1) // 2
        while hole > top and less(a[first + parent], value):
            a[first + hole] = a[first + parent]
            hole = parent
            parent = (hole - 1) // 2
        a[first + hole] = value

    def _heap_select(self, first, middle, last):
        a, less = self.items, self.less
        length = middle - first
        if length >= 2:  # make_heap
            parent = (length - 2) // 2
            while True:
                self._sift(first, parent, length, a[first + parent])
                if parent == 0:
                    break
                parent -= 1
        for i in range(middle, last):
            if less(a[i], a[first]):  # pop_heap into position i
                value = a[i]
                a[i] = a[first]
                self._sift(first, 0, length, value)

    def _insertion_sort(self, first, last):
        a, less = self.items, self.less
        for i in range(first + 1, last):
            value = a[i]
            if less(value, a[first]):
                a[first + 1:i + 1] = a[first:i]
                a[first] = value
            else:
                j = i
                while less(value, a[j - 1]):
                    a[j] = a[j - 1]
                    j -= 1
                a[j] = value

    def _nth_element(self, nth):
        # introselect: median-of-three pivot, unguarded partition, heap select once the
        # depth budget (2 * floor(log2 n)) is spent, insertion sort on the last <= 3
        a = self.items
        first, last = 0, len(a)
        if nth == last:
            return
        depth = 2 * (last.bit_length() - 1)
        while last - first > 3:
            if depth == 0:
                self._heap_select(first, nth + 1, last)
                a[first], a[nth] = a[nth], a[first]
                return
            depth -= 1
            lo = self._partition_pivot(first, last)
            if lo <= nth:
                first = lo
            else:
                last = lo
        self._insertion_sort(first, last)

    def topk(self, k):
        """The indices of the ``k`` first pairs in the order torch's sorted topk leaves them:
        ``partial_sort`` (a heap select, then a heap sort) when ``k * 64 <= n``, else
        ``nth_element`` then ``std::sort`` of the ``k - 1`` before the nth."""
        n = len(self.items)
        if k * 64 <= n:
            self._heap_select(0, k, n)
            self._sort_heap(0, k)
        else:
            self._nth_element(k - 1)
            self._sort(0, k - 1)
        return [i for _, i in self.items[:k]]

    def _sort_heap(self, first, last):
        a = self.items
        while last - first > 1:
            last -= 1
            value = a[last]
            a[last] = a[first]
            self._sift(first, 0, last - first, value)

    def _partition_pivot(self, first, last):
        # median of three moved to ``first``, then libstdc++'s unguarded partition
        a, less = self.items, self.less
        x, y, z = first + 1, first + (last - first) // 2, last - 1
        if less(a[x], a[y]):
            m = y if less(a[y], a[z]) else (z if less(a[x], a[z]) else x)
        else:
            m = x if less(a[x], a[z]) else (z if less(a[y], a[z]) else y)
        a[first], a[m] = a[m], a[first]
        pivot, lo, hi = a[first], first + 1, last
        while True:
            while less(a[lo], pivot):
                lo += 1
            hi -= 1
            while less(pivot, a[hi]):
                hi -= 1
            if not lo < hi:
                return lo
            a[lo], a[hi] = a[hi], a[lo]
            lo += 1

    def _linear_insert(self, i):
        a, less = self.items, self.less
        value, j = a[i], i
        while less(value, a[j - 1]):
            a[j] = a[j - 1]
            j -= 1
        a[j] = value

    def _introsort(self, first, last, depth):
        while last - first > 16:
            if depth == 0:
                self._heap_select(first, last, last)
                self._sort_heap(first, last)
                return
            depth -= 1
            cut = self._partition_pivot(first, last)
            self._introsort(cut, last, depth)
            last = cut

    def _sort(self, first, last):
        # std::sort: introsort down to runs of 16, then one insertion sort pass
        if last - first < 2:
            return
        self._introsort(first, last, 2 * ((last - first).bit_length() - 1))
        if last - first > 16:
            self._insertion_sort(first, first + 16)
            for i in range(first + 16, last):
                self._linear_insert(i)
        else:
            self._insertion_sort(first, last)
