"""torch.distributed.rendezvous: turn an init_method URL into a store, a rank
and a world size, as torch's handlers do:

- env://          MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE (arguments win);
- tcp://host:port ?rank=&world_size= (rank 0 runs the TCPStore server);
- file:///path    ?rank=&world_size= (a FileStore).

The error messages are torch's, so scripts that match on them keep working.
"""
import os
from datetime import timedelta
from urllib.parse import parse_qs, urlencode, urlparse

from ._store import FileStore, TCPStore

__all__ = ["rendezvous", "register_rendezvous_handler"]

_handlers = {}


def register_rendezvous_handler(scheme, handler):
    """Add `handler(url, timeout=...)`, a generator of (store, rank,
    world_size), for URLs of `scheme`."""
    if scheme in _handlers:
        raise RuntimeError("Rendezvous handler for %s:// already registered" % scheme)
    _handlers[scheme] = handler


def _rendezvous_error(msg):
    return ValueError("Error initializing torch.distributed using " + msg)


def _query(url):
    return {k: v[0] for k, v in parse_qs(urlparse(url).query).items()}


def rendezvous(url, rank=-1, world_size=-1, **kwargs):
    """A generator that yields (store, rank, world_size) for `url`; rank and
    world_size given here are added to the URL's query."""
    if not isinstance(url, str):
        raise RuntimeError("`url` must be a string. %s: %s" % (type(url), url))
    if not isinstance(rank, int):
        raise RuntimeError("`rank` must be an integer. %s" % rank)
    if not isinstance(world_size, int):
        raise RuntimeError("`world_size` must be an integer. %s" % world_size)
    parsed = urlparse(url)
    if rank != -1 or world_size != -1:
        query = _query(url)
        if "rank" in query or "world_size" in query:
            raise AssertionError("The url: %s has node-specific arguments(rank, world_size) "
                                 "already." % url)
        if rank != -1:
            query["rank"] = rank
        if world_size != -1:
            query["world_size"] = world_size
        url = parsed._replace(query=urlencode(query)).geturl()
    if parsed.scheme not in _handlers:
        raise RuntimeError("No rendezvous handler for %s://" % parsed.scheme)
    return _handlers[parsed.scheme](url, **kwargs)


def _int_param(query, name, scheme):
    if name not in query:
        raise _rendezvous_error("%s:// rendezvous: %s parameter missing"
                                % (scheme, "world size" if name == "world_size" else name))
    return int(query[name])


def _tcp_handler(url, timeout=timedelta(minutes=30), **kwargs):
    result = urlparse(url)
    if not result.port:
        raise _rendezvous_error("tcp:// rendezvous: port number missing")
    query = _query(url)
    rank = _int_param(query, "rank", "tcp")
    world_size = _int_param(query, "world_size", "tcp")
    # multi_tenant: several groups of one process may rendezvous on one port.
    store = TCPStore(result.hostname, result.port, world_size, rank == 0, timeout,
                     multi_tenant=True)
    yield store, rank, world_size
    raise RuntimeError("Unable to perform re-rendezvous using tcp:// handler")


def _file_handler(url, timeout=timedelta(minutes=30), **kwargs):
    result = urlparse(url)
    path = result.path
    if not path:
        raise _rendezvous_error("file:// rendezvous: path missing")
    query = _query(url)
    rank = _int_param(query, "rank", "file")
    world_size = _int_param(query, "world_size", "file")
    store = FileStore(path, world_size)
    store.set_timeout(timeout)
    yield store, rank, world_size
    raise RuntimeError("Unable to perform re-rendezvous using file:// handler")


def _env_handler(url, timeout=timedelta(minutes=30), **kwargs):
    def env_error(var):
        return _rendezvous_error("env:// rendezvous: environment variable %s expected, but "
                                 "not set" % var)

    query = _query(url)
    if "rank" in query:
        rank = int(query["rank"])
    elif "RANK" in os.environ:
        rank = int(os.environ["RANK"])
    else:
        raise env_error("RANK")
    if "world_size" in query:
        world_size = int(query["world_size"])
    elif "WORLD_SIZE" in os.environ:
        world_size = int(os.environ["WORLD_SIZE"])
    else:
        raise env_error("WORLD_SIZE")
    master_addr = os.environ.get("MASTER_ADDR")
    if master_addr is None:
        raise env_error("MASTER_ADDR")
    master_port = os.environ.get("MASTER_PORT")
    if master_port is None:
        raise env_error("MASTER_PORT")
    store = TCPStore(master_addr, int(master_port), world_size, rank == 0, timeout,
                     multi_tenant=True)
    yield store, rank, world_size
    raise RuntimeError("Unable to perform re-rendezvous using env:// handler")


register_rendezvous_handler("tcp", _tcp_handler)
register_rendezvous_handler("env", _env_handler)
register_rendezvous_handler("file", _file_handler)
