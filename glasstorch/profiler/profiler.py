"""torch.profiler's API over Python-level events.

While a ``profile`` is running, every operator model code can reach is replaced by a thin
timing wrapper (``glasstorch._callable_patch``, shared with the ONNX exporter): Tensor
methods and operators, the functions of ``glasstorch``, ``nn.functional`` and ``linalg``,
and every reference to them in loaded modules' globals (``from torch import flatten``),
in the modules a model calls (``self.activation = F.relu``) and their classes
(``staticmethod(F.tanh)``), found at their first call. So are the autograd engine's
per-node call, ``Optimizer.step``/``zero_grad`` and the DataLoader iterator's ``__next__``.
Everything is put back on exit, so nothing costs anything when no profiler runs. Events
nest by time on each thread; self time is total time minus the children's.
"""

from __future__ import annotations

import enum
import functools
import inspect
import json
import os
import socket
import sys
import threading
import time
import warnings

from .._callable_patch import CallablePatch, aten_name

__all__ = ["profile", "record_function", "schedule", "tensorboard_trace_handler",
           "kineto_available", "ProfilerActivity", "ProfilerAction", "EventList", "FunctionEvent",
           "FunctionEventAvg"]


def kineto_available() -> bool:
    """False: glasstorch's profiler is its own Python recorder, not Kineto."""
    return False


class ProfilerActivity(enum.Enum):
    """What to profile: ``CPU`` is what glasstorch records; the other members exist so torch code
    can name them."""
    CPU = 0
    CUDA = 1
    MTIA = 2
    XPU = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    """What a ``schedule`` tells the profiler to do at a step: nothing, warm up, record, or record
    and hand the trace to ``on_trace_ready``."""
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0):
    """Step number -> ProfilerAction: skip ``skip_first`` steps, then cycles of ``wait``
    idle, ``warmup`` (recorded, discarded) and ``active`` recorded steps, ``repeat`` times
    (0: forever). The last active step of a cycle is RECORD_AND_SAVE."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError("Invalid profiler schedule arguments")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)
    cycle = wait + warmup + active

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Invalid step number {step}")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        pos = step % cycle
        if pos < wait:
            return ProfilerAction.NONE
        if pos < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if pos < cycle - 1 else ProfilerAction.RECORD_AND_SAVE
    return schedule_fn


def _default_schedule(_step):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False):
    """An ``on_trace_ready`` callback writing each trace as
    ``<dir_name>/<worker_name>.<time_ms>.pt.trace.json`` (``.gz`` with ``use_gzip``)."""
    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        fname = f"{name}.{time.time_ns() // 1_000_000}.pt.trace.json"
        if use_gzip:
            fname += ".gz"
        prof.export_chrome_trace(os.path.join(dir_name, fname))
    return handler


# ---------------------------------------------------------------------------- recording
# The running recorder (None when nothing records): the one check every wrapper makes.
_recorder = [None]
_GLASSTORCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _user_frame():
    """'file(line): function' of the innermost caller outside glasstorch."""
    f = sys._getframe(2)
    while f is not None and f.f_code.co_filename.startswith(_GLASSTORCH_DIR):
        f = f.f_back
    if f is None:
        return []
    return [f"{f.f_code.co_filename}({f.f_lineno}): {f.f_code.co_name}"]


class _Recorder:
    """Collects (name, cat, start_ns, dur_ns, self_ns, mem, self_mem, shapes, tid, stack)."""

    def __init__(self, record_shapes, profile_memory, with_stack):
        self.record_shapes = record_shapes
        self.with_stack = with_stack
        if profile_memory:
            from .. import memory
            self.mem = memory._c
        else:
            self.mem = None
        self.events = []
        self._local = threading.local()

    def _stack(self):
        try:
            return self._local.stack
        except AttributeError:
            self._local.stack = []
            return self._local.stack

    def begin(self, name, cat, shapes=None):
        """Open a range; returns the token ``end`` needs."""
        frame = [name, 0, 0]  # name, children's time, children's memory
        st = self._stack()
        st.append(frame)
        stack = _user_frame() if self.with_stack else None
        mem = self.mem[0] if self.mem is not None else 0
        return (frame, st, name, cat, shapes, stack, mem, time.perf_counter_ns())

    def end(self, token):
        t1 = time.perf_counter_ns()
        frame, st, name, cat, shapes, stack, mem0, t0 = token
        mem = self.mem[0] - mem0 if self.mem is not None else 0
        if st and st[-1] is frame:
            st.pop()
        elif frame in st:  # a range closed out of order (record_function misuse)
            st.remove(frame)
        dur = t1 - t0
        if st:
            st[-1][1] += dur
            st[-1][2] += mem
        self.events.append((name, cat, t0, dur, dur - frame[1], mem, mem - frame[2], shapes,
                            threading.get_ident(), stack))

    def call(self, name, cat, fn, args, kwargs, shapes=None):
        st = self._stack()
        if st and st[-1][0] == name:  # e.g. a subclass's step calling super().step()
            return fn(*args, **kwargs)
        if shapes is None and self.record_shapes:
            shapes = _shapes(args)
        token = self.begin(name, cat, shapes)
        try:
            return fn(*args, **kwargs)
        finally:
            self.end(token)


def _shapes(args):
    from .._tensor import Tensor
    return [list(a._data.shape) if isinstance(a, Tensor) else [] for a in args]


class record_function:
    """A named range in the profile, as a context manager or a decorator."""

    def __init__(self, name: str, args: str | None = None):
        self.name = name
        self.args = args
        self._token = None

    def __enter__(self):
        rec = _recorder[0]
        if rec is not None:
            self._token = (rec, rec.begin(self.name, "user_annotation"))
        return self

    def __exit__(self, *exc):
        if self._token is not None:
            rec, token = self._token
            self._token = None
            rec.end(token)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return wrapper


# ---------------------------------------------------------------------------- patching
def _op_wrapper(fn, key):
    name = aten_name(key)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        rec = _recorder[0]
        if rec is None:
            return fn(*args, **kwargs)
        return rec.call(name, "cpu_op", fn, args, kwargs)
    return wrapper


def _self_named_wrapper(fmt, cat, fn):
    """Wrapper whose event name depends on the class of ``self`` (args[0])."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        rec = _recorder[0]
        if rec is None:
            return fn(*args, **kwargs)
        return rec.call(fmt.format(type(args[0]).__name__), cat, fn, args, kwargs, [])
    return wrapper


# One patch for every profile (one runs at a time): its wrappers are made once.
_PATCH = CallablePatch(_op_wrapper)


def _all_subclasses(cls):
    out, todo = [], [cls]
    while todo:
        c = todo.pop()
        out.append(c)
        todo.extend(c.__subclasses__())
    return out


def _install(patch):
    from ..autograd import engine
    from ..nn.modules.module import Module
    from ..optim.optimizer import Optimizer
    from ..utils.data import dataloader

    patch.wrap_operators()
    module_call = Module.__call__

    def call_covering(self, *args, **kwargs):   # the module's own references, at first use
        patch.cover_object(self)
        return module_call(self, *args, **kwargs)
    patch.set_attr(Module, "__call__", call_covering)

    call_node = engine._call_node

    def _call_node(node, grads):
        rec = _recorder[0]
        if rec is None:
            return call_node(node, grads)
        shapes = ([list(g._data.shape) if g is not None else [] for g in grads]
                  if rec.record_shapes else None)
        return rec.call(node.name(), "autograd", call_node, (node, grads), {}, shapes)
    patch.set_attr(engine, "_call_node", _call_node)

    for cls in _all_subclasses(Optimizer):
        for meth in ("step", "zero_grad"):
            fn = cls.__dict__.get(meth)
            if fn is not None and inspect.isfunction(fn):
                fmt = "Optimizer." + meth + "#{0}." + meth
                patch.set_attr(cls, meth, _self_named_wrapper(fmt, "cpu_op", fn))
    it = dataloader._BaseDataLoaderIter
    patch.set_attr(it, "__next__", _self_named_wrapper(
        "enumerate(DataLoader)#{0}.__next__", "dataloader", it.__dict__["__next__"]))


# ---------------------------------------------------------------------------- results
def _fmt_time(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _fmt_mem(n):
    for unit, size in (("Gb", 1 << 30), ("Mb", 1 << 20), ("Kb", 1 << 10)):
        if abs(n) >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n} b"


class FunctionEvent:
    """One recorded range (times in microseconds, memory in bytes)."""

    __slots__ = ("id", "name", "cat", "start_us", "cpu_time_total", "self_cpu_time_total",
                 "cpu_memory_usage", "self_cpu_memory_usage", "input_shapes", "thread",
                 "stack", "count")

    def __init__(self, id, raw, base_ns):
        (self.name, self.cat, t0, dur, self_dur, self.cpu_memory_usage,
         self.self_cpu_memory_usage, shapes, self.thread, stack) = raw
        self.id = id
        self.start_us = (t0 - base_ns) / 1e3
        self.cpu_time_total = dur / 1e3
        self.self_cpu_time_total = self_dur / 1e3
        self.input_shapes = shapes if shapes is not None else []
        self.stack = stack or []
        self.count = 1

    key = property(lambda self: self.name, doc="The event's name (what key_averages groups by).")
    end_us = property(lambda self: self.start_us + self.cpu_time_total,
                      doc="When the event ended, in microseconds from the trace's start.")
    cpu_time = property(lambda self: self.cpu_time_total,
                        doc="The event's total CPU time, in microseconds.")
    is_user_annotation = property(lambda self: self.cat == "user_annotation",
                                  doc="Whether the event is a ``record_function`` range.")

    def __repr__(self):
        return (f"<FunctionEvent name={self.name} cpu_time={_fmt_time(self.cpu_time_total)} "
                f"self_cpu_time={_fmt_time(self.self_cpu_time_total)} "
                f"input_shapes={self.input_shapes}>")


class FunctionEventAvg:
    """Events with the same key added up (``count`` calls)."""

    def __init__(self, key, input_shapes=None):
        self.key = key
        self.input_shapes = input_shapes
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.is_user_annotation = False

    def add(self, ev):
        """Add another event's (or average's) counts and times to this one."""
        self.count += ev.count
        self.cpu_time_total += ev.cpu_time_total
        self.self_cpu_time_total += ev.self_cpu_time_total
        self.cpu_memory_usage += ev.cpu_memory_usage
        self.self_cpu_memory_usage += ev.self_cpu_memory_usage
        self.is_user_annotation = ev.is_user_annotation
        return self

    @property
    def cpu_time(self):
        """Mean total CPU time per call, in microseconds."""
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} count={self.count} "
                f"self_cpu_time_total={_fmt_time(self.self_cpu_time_total)} "
                f"cpu_time_total={_fmt_time(self.cpu_time_total)}>")


_SORT_KEYS = ("cpu_time", "cpu_time_total", "self_cpu_time_total", "cpu_memory_usage",
              "self_cpu_memory_usage", "count")


class EventList(list):
    """A list of FunctionEvent / FunctionEventAvg with torch's table and export helpers."""

    def __init__(self, events=(), profile_memory=False, record_shapes=False):
        super().__init__(events)
        self._profile_memory = profile_memory
        self._record_shapes = record_shapes

    @property
    def self_cpu_time_total(self):
        """The sum of every event's self CPU time, in microseconds."""
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """One FunctionEventAvg per name (and per input shapes / top stack frames)."""
        groups = {}
        for e in self:
            key = e.key
            if group_by_input_shape:
                key = (key, str(e.input_shapes))
            if group_by_stack_n:
                key = (key, tuple(e.stack[:group_by_stack_n]))
            avg = groups.get(key)
            if avg is None:
                avg = groups[key] = FunctionEventAvg(
                    e.key, e.input_shapes if group_by_input_shape else None)
            avg.add(e)
        return EventList(groups.values(), self._profile_memory,
                         self._record_shapes and group_by_input_shape)

    def total_average(self):
        """One FunctionEventAvg summing every event."""
        total = FunctionEventAvg("Total")
        for e in self:
            total.add(e)
        return total

    def table(self, sort_by=None, row_limit=100, max_name_column_width=55, header=None,
              top_level_events_only=False):
        """torch's profiler table: self/total CPU time (and memory, input shapes)."""
        rows = list(self)
        if sort_by is not None:
            attr = sort_by
            if attr not in _SORT_KEYS:
                if "cuda" in attr or "device" in attr or "xpu" in attr:
                    attr = None  # no device here: keep the recorded order
                else:
                    raise AttributeError(f"Unknown sort key {sort_by!r}; one of {_SORT_KEYS}")
            if attr is not None:
                rows.sort(key=lambda e: getattr(e, attr), reverse=True)
        if row_limit is not None and row_limit > 0:
            rows = rows[:row_limit]
        total_self = self.self_cpu_time_total
        width = min(max([len(e.key) for e in rows] + [4]), max_name_column_width)
        cols = [("Name", width)] + [(c, 12) for c in (
            "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg")]
        if self._profile_memory:
            cols += [("CPU Mem", 12), ("Self CPU Mem", 12)]
        cols.append(("# of Calls", 12))
        shapes = self._record_shapes
        if shapes:
            cols.append(("Input Shapes", 32))
        sep = "  ".join("-" * w for _, w in cols) + "  "
        head = "  ".join(f"{c:>{w}}" for c, w in cols) + "  "

        def pct(x):
            return f"{100.0 * x / total_self:.2f}%" if total_self else "0.00%"
        lines = [sep] if header is None else [header, sep]
        lines += [head, sep]
        for e in rows:
            name = e.key if len(e.key) <= width else e.key[:width - 3] + "..."
            vals = [name, pct(e.self_cpu_time_total), _fmt_time(e.self_cpu_time_total),
                    pct(e.cpu_time_total), _fmt_time(e.cpu_time_total),
                    _fmt_time(e.cpu_time)]
            if self._profile_memory:
                vals += [_fmt_mem(e.cpu_memory_usage), _fmt_mem(e.self_cpu_memory_usage)]
            vals.append(str(e.count))
            if shapes:
                vals.append(str(e.input_shapes)[:32])
            lines.append("  ".join(f"{v:>{w}}" for v, (_, w) in zip(vals, cols)) + "  ")
        lines += [sep, f"Self CPU time total: {_fmt_time(total_self)}", ""]
        return "\n".join(lines)

    def export_chrome_trace(self, path):
        """Write the events as Chrome trace JSON (complete events, microseconds)."""
        pid = os.getpid()
        trace = []
        for e in self:
            ev = {"ph": "X", "cat": e.cat, "name": e.name, "pid": pid, "tid": e.thread,
                  "ts": round(e.start_us, 3), "dur": round(e.cpu_time_total, 3),
                  "args": {"External id": e.id}}
            if e.input_shapes:
                ev["args"]["Input Dims"] = e.input_shapes
            if e.stack:
                ev["args"]["Call stack"] = ";".join(e.stack)
            if self._profile_memory:
                ev["args"]["CPU Mem"] = e.cpu_memory_usage
            trace.append(ev)
        trace.sort(key=lambda ev: (ev["ts"], -ev["dur"]))
        meta = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                 "args": {"name": "glasstorch (CPU)"}}]
        doc = {"schemaVersion": 1, "traceEvents": meta + trace, "displayTimeUnit": "ms",
               "deviceProperties": []}
        if str(path).endswith(".gz"):
            import gzip
            with gzip.open(path, "wt") as f:
                json.dump(doc, f)
        else:
            with open(path, "w") as f:
                json.dump(doc, f)
        return path


# ---------------------------------------------------------------------------- profile
class profile:
    """Record glasstorch ops, backward nodes, optimizer steps and DataLoader waits.

    ``with profile(...) as prof: ...; prof.step()``; then ``prof.key_averages().table()``
    or ``prof.export_chrome_trace(path)``. Only one profiler runs at a time.
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False,
                 with_flops=False, with_modules=False, experimental_config=None,
                 execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None):
        acts = set(activities) if activities is not None else {ProfilerActivity.CPU}
        if acts - {ProfilerActivity.CPU}:
            warnings.warn("glasstorch runs on the CPU only; device activities are not "
                          "recorded", stacklevel=2)
        self.activities = acts
        self.schedule = schedule if schedule is not None else _default_schedule
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.step_num = 0
        self.current_action = ProfilerAction.NONE
        self._events = None
        self._rec = None
        self._step_token = None
        self._enabled_memory = False
        self._base_ns = time.perf_counter_ns()

    # -- lifecycle
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        """Start recording (what entering the ``with`` block does); RuntimeError when a profiler
        already runs."""
        if _profile_running[0] is not None:
            raise RuntimeError("Profiler is already enabled on this thread (only one "
                               "glasstorch profiler can run at a time)")
        _profile_running[0] = self
        if self.profile_memory:
            from .. import memory
            self._enabled_memory = not memory.is_enabled()
            memory.enable()
        try:
            _install(_PATCH)
        except BaseException:
            _PATCH.restore()
            _profile_running[0] = None
            raise
        self.step_num = 0
        self.current_action = self.schedule(0)
        if self.current_action is not ProfilerAction.NONE:
            self._begin_collecting()

    def stop(self):
        """Stop recording and finish the current step's trace (what leaving the ``with`` block
        does)."""
        if _profile_running[0] is not self:
            return
        try:
            self._close_step()
            if self.current_action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE):
                self._finish()
            self._stop_collecting()
        finally:
            _PATCH.restore()
            _profile_running[0] = None
            if self._enabled_memory:
                from .. import memory
                memory.disable()

    def step(self):
        """Mark the end of a training step; moves along the schedule."""
        if _profile_running[0] is not self:
            return
        self._close_step()
        prev = self.current_action
        self.step_num += 1
        cur = self.current_action = self.schedule(self.step_num)
        A = ProfilerAction
        if prev is A.RECORD_AND_SAVE or (prev is A.RECORD and cur in (A.NONE, A.WARMUP)):
            self._finish()
            self._stop_collecting()
        elif prev is A.WARMUP and cur is A.NONE:
            self._stop_collecting()
        elif prev is A.WARMUP:  # warm-up events are discarded
            self._rec.events.clear()
        if cur is not A.NONE and self._rec is None:
            self._begin_collecting()
        self._open_step()

    # -- internals
    def _begin_collecting(self):
        self._rec = _Recorder(self.record_shapes, self.profile_memory, self.with_stack)
        _recorder[0] = self._rec
        self._open_step()

    def _stop_collecting(self):
        _recorder[0] = None
        self._rec = None

    def _open_step(self):
        if self._rec is not None and self._step_token is None:
            self._step_token = self._rec.begin(f"ProfilerStep#{self.step_num}", "cpu_op")

    def _close_step(self):
        if self._step_token is not None and self._rec is not None:
            self._rec.end(self._step_token)
        self._step_token = None

    def _finish(self):
        raw = sorted(self._rec.events, key=lambda r: (r[2], -r[3]))
        self._events = EventList([FunctionEvent(i, r, self._base_ns) for i, r in enumerate(raw)],
                                 self.profile_memory, self.record_shapes)
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    # -- results
    def events(self) -> EventList:
        """Every recorded event of the last finished trace, by start time."""
        if self._events is None:
            raise AssertionError("no trace recorded yet (the profiler has not finished a "
                                 "recording cycle)")
        return self._events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """Per-name totals of the last trace (see ``EventList.table``)."""
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path):
        """Write the last trace for chrome://tracing / Perfetto."""
        return self.events().export_chrome_trace(path)


_profile_running = [None]
