"""torch.fx.immutable_collections: the list and dict types that hold a Node's args and kwargs
(hashable, and errors on mutation so that edits go through ``node.args = ...``)."""

from __future__ import annotations

from ._compatibility import compatibility

__all__ = ["immutable_list", "immutable_dict"]

_HELP = ("If you are attempting to modify the kwargs or args of a torch.fx.Node object,\n"
         "instead create a new copy of it and assign the copy to the node:\n\n"
         "    new_args = ...  # copy and mutate args\n    node.args = new_args")


def _no_mutation(self, *args, **kwargs):
    raise TypeError(f"{type(self).__name__!r} object does not support mutation. {_HELP}")


@compatibility(is_backward_compatible=True)
class immutable_list(list):
    """A list that refuses mutation; hashable by its contents."""

    __delitem__ = __iadd__ = __imul__ = __setitem__ = _no_mutation
    append = clear = extend = insert = pop = remove = reverse = sort = _no_mutation

    def __hash__(self):
        return hash(tuple(self))

    def __reduce__(self):
        return (immutable_list, (tuple(self),))


@compatibility(is_backward_compatible=True)
class immutable_dict(dict):
    """A dict that refuses mutation; hashable by its items."""

    __delitem__ = __setitem__ = __ior__ = _no_mutation
    clear = pop = popitem = setdefault = update = _no_mutation

    def __hash__(self):
        return hash(tuple(self.items()))

    def __reduce__(self):
        return (immutable_dict, (tuple(self.items()),))
