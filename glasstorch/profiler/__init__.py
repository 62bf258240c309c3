"""glasstorch.profiler: torch.profiler's API over Python-level events (ops, backward nodes,
optimizer steps, DataLoader waits, user ranges)."""

from .profiler import (  # noqa: F401
    EventList,
    FunctionEvent,
    FunctionEventAvg,
    ProfilerAction,
    ProfilerActivity,
    kineto_available,
    profile,
    record_function,
    schedule,
    tensorboard_trace_handler,
)

__all__ = ["profile", "record_function", "schedule", "tensorboard_trace_handler",
           "ProfilerActivity", "ProfilerAction", "EventList", "FunctionEvent",
           "FunctionEventAvg", "kineto_available"]
