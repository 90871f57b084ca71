"""pycuda_sem.cuda.streams: torch.cuda.streams, the Stream, ExternalStream
and Event classes of pycuda_sem.cuda (the same C types)."""
from . import Stream, ExternalStream, Event  # noqa: F401

__all__ = ["Stream", "ExternalStream", "Event"]
