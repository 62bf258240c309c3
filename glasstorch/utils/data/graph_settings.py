"""Settings applied over a graph of DataPipes (torch.utils.data.graph_settings)."""

import warnings

from .datapipes.datapipe import IterDataPipe, MapDataPipe

__all__ = ["apply_shuffle_settings", "get_all_graph_pipes"]


def get_all_graph_pipes(datapipe):
    """``datapipe`` and every DataPipe it reads from (through its attributes), once each."""
    seen, order, todo = set(), [], [datapipe]
    while todo:
        dp = todo.pop()
        if id(dp) in seen:
            continue
        seen.add(id(dp))
        order.append(dp)
        for value in vars(dp).values():
            for v in value if isinstance(value, (list, tuple)) else (value,):
                if isinstance(v, (IterDataPipe, MapDataPipe)):
                    todo.append(v)
    return order


def apply_shuffle_settings(datapipe, shuffle=None):
    """Turn shuffling on or off in every shuffler of ``datapipe``'s graph (adding one at the
    end, with a warning, when shuffling is asked for and there is none); None changes
    nothing."""
    if shuffle is None:
        return datapipe
    shufflers = [dp for dp in get_all_graph_pipes(datapipe)
                 if callable(getattr(type(dp), "set_shuffle", None))
                 and callable(getattr(type(dp), "set_seed", None))]
    if not shufflers and shuffle:
        warnings.warn("`shuffle=True` was set, but the datapipe does not contain a `Shuffler`. "
                      "Adding one at the end. Be aware that the default buffer size might not "
                      "be sufficient for your task.", stacklevel=2)
        datapipe = datapipe.shuffle()
        shufflers = [datapipe]
    for shuffler in shufflers:
        shuffler.set_shuffle(shuffle)
    return datapipe
