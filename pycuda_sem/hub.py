"""torch.hub: pretrained weights from a URL into a local cache, and
entrypoints from a local hubconf.py.

load_state_dict_from_url(url) downloads a checkpoint once into
<hub dir>/checkpoints (TORCH_HOME, default ~/.cache/torch, plus /hub, as
torch) and loads it with pycuda_sem.load, so torchvision-style
`model.load_state_dict(load_state_dict_from_url(url))` works. Loading code
from GitHub repositories (hub.load with source='github') is not implemented;
source='local' is.
"""
import hashlib as _hashlib
import os as _os
import re as _re
import shutil as _shutil
import sys as _sys
import tempfile as _tempfile
import urllib.parse as _urlparse
import urllib.request as _urlrequest

__all__ = ["get_dir", "set_dir", "download_url_to_file", "load_state_dict_from_url", "load", "list",
           "help"]

_hub_dir = None
HASH_REGEX = _re.compile(r"-([a-f0-9]*)\.")


def get_dir():
    """The hub cache directory: set_dir's, else $TORCH_HOME/hub, else ~/.cache/torch/hub."""
    if _hub_dir is not None:
        return _hub_dir
    home = _os.path.expanduser(_os.getenv("TORCH_HOME", _os.path.join(
        _os.getenv("XDG_CACHE_HOME", "~/.cache"), "torch")))
    return _os.path.join(home, "hub")


def set_dir(d):
    global _hub_dir
    _hub_dir = _os.path.expanduser(_os.fspath(d))


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Download url to the file dst (through a temporary file in the same
    directory, moved into place at the end); with hash_prefix, the SHA-256
    of the content must start with it, else RuntimeError."""
    dst = _os.path.expanduser(_os.fspath(dst))
    d = _os.path.dirname(dst) or "."
    _os.makedirs(d, exist_ok=True)
    sha = _hashlib.sha256()
    fd, tmp = _tempfile.mkstemp(dir=d, prefix=".download_")
    try:
        with _os.fdopen(fd, "wb") as f, _urlrequest.urlopen(url) as r:  # noqa: S310 - the caller's URL
            while True:
                chunk = r.read(1 << 20)
                if not chunk:
                    break
                f.write(chunk)
                sha.update(chunk)
        if hash_prefix is not None and not sha.hexdigest().startswith(hash_prefix):
            raise RuntimeError('invalid hash value (expected "%s", got "%s")' % (hash_prefix, sha.hexdigest()))
        _shutil.move(tmp, dst)
        tmp = None
    finally:
        if tmp is not None and _os.path.exists(tmp):
            _os.remove(tmp)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True, check_hash=False,
                             file_name=None, weights_only=False):
    """The object serialized at url (downloaded once into model_dir, default
    <hub dir>/checkpoints), loaded with pycuda_sem.load. With check_hash, the
    file name's "-<hex>." part must prefix the content's SHA-256."""
    from .serialization import load as _load
    if model_dir is None:
        model_dir = _os.path.join(get_dir(), "checkpoints")
    _os.makedirs(model_dir, exist_ok=True)
    filename = file_name or _os.path.basename(_urlparse.urlparse(url).path)
    if not filename:
        raise ValueError("load_state_dict_from_url: cannot take a file name from %r; pass file_name=" % url)
    cached = _os.path.join(model_dir, filename)
    if not _os.path.exists(cached):
        _sys.stderr.write('Downloading: "%s" to %s\n' % (url, cached))
        prefix = None
        if check_hash:
            m = HASH_REGEX.search(filename)
            prefix = m.group(1) if m else None
        download_url_to_file(url, cached, prefix, progress=progress)
    return _load(cached, map_location=map_location, weights_only=weights_only)


def _local_hubconf(repo_or_dir):
    import importlib.util
    path = _os.path.join(repo_or_dir, "hubconf.py")
    if not _os.path.isfile(path):
        raise FileNotFoundError("hubconf.py not found in %s" % repo_or_dir)
    spec = importlib.util.spec_from_file_location("hubconf", path)
    mod = importlib.util.module_from_spec(spec)
    _sys.path.insert(0, repo_or_dir)
    try:
        spec.loader.exec_module(mod)
    finally:
        _sys.path.remove(repo_or_dir)
    return mod


def _check_source(source, what):
    if source == "github":
        raise NotImplementedError("torch.hub.%s(source='github'): pycuda_sem does not fetch code from "
                                  "GitHub; clone the repository and use source='local'" % what)
    if source != "local":
        raise ValueError('Unknown source: "%s". Allowed values: "github" | "local".' % source)


def list(repo_or_dir, force_reload=False, skip_validation=False, trust_repo=None, verbose=True,  # noqa: A001
         source="github"):
    """The entrypoints of a local hubconf.py (source='local')."""
    _check_source(source, "list")
    mod = _local_hubconf(repo_or_dir)
    return [n for n in dir(mod) if callable(getattr(mod, n)) and not n.startswith("_")]


def help(repo_or_dir, model, force_reload=False, skip_validation=False, trust_repo=None,  # noqa: A001
         source="github"):
    _check_source(source, "help")
    return getattr(_local_hubconf(repo_or_dir), model).__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo=None, force_reload=False, verbose=True,
         skip_validation=False, **kwargs):
    """model(*args, **kwargs) from a local hubconf.py (source='local')."""
    _check_source(source, "load")
    fn = getattr(_local_hubconf(repo_or_dir), model, None)
    if fn is None or not callable(fn):
        raise RuntimeError("Cannot find callable %s in hubconf" % model)
    return fn(*args, **kwargs)
