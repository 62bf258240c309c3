"""The DataPipe bases: an ``IterDataPipe`` is an iterable dataset whose ``reset()`` runs at
the start of every iteration and whose subclasses can be registered as chained methods
(``dp.shuffle()``); a ``MapDataPipe`` is an indexable one."""

import functools

from ..dataset import Dataset, IterableDataset

__all__ = ["DataChunk", "IterDataPipe", "MapDataPipe"]


class IterDataPipe(IterableDataset):
    """An iterable DataPipe; ``reset()`` is called before each new iteration."""

    functions = {}  # functional name -> DataPipe class (register_datapipe_as_function)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "__iter__" in cls.__dict__:
            inner = cls.__dict__["__iter__"]

            @functools.wraps(inner)
            def __iter__(self):
                self.reset()
                return inner(self)
            cls.__iter__ = __iter__

    def reset(self):
        """Called as an iteration starts: clear per-iteration state (nothing by default)."""

    def __getattr__(self, name):
        cls = IterDataPipe.functions.get(name)
        if cls is None:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}")
        return functools.partial(cls, self)

    @classmethod
    def register_datapipe_as_function(cls, function_name, cls_to_register):
        """Make ``dp.<function_name>(*args)`` build ``cls_to_register(dp, *args)``."""
        if function_name in cls.functions:
            raise Exception(f"Unable to add DataPipe function name {function_name} as it is "
                            "already taken")
        cls.functions[function_name] = cls_to_register

    def __repr__(self):
        return type(self).__qualname__


class MapDataPipe(Dataset):
    """An indexable DataPipe (``__getitem__`` and ``__len__``)."""

    def __repr__(self):
        return type(self).__qualname__


class DataChunk(list):
    """A batch of items that DataPipes pass along as one (a list)."""

    def __init__(self, items):
        super().__init__(items)
        self.items = items

    def as_str(self, indent=""):
        return indent + "[" + ", ".join(str(i) for i in iter(self)) + "]"

    def raw_iterator(self):
        yield from self.items
