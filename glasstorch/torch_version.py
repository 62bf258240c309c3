"""glasstorch.torch_version: ``TorchVersion``, the type of ``torch.__version__``.

``TorchVersion`` is a ``str`` (so ``.split('.')``, formatting and ``startswith`` work) whose
ordering comparisons follow PEP 440 (``"2.13.0+cpu" > "2.9"``, where plain string order says
otherwise) and also accept tuples such as ``(2, 6)``. As torch's does, it falls back to plain
string comparison when either side is not a valid version, and ``!=`` stays ``str``'s (torch
overrides ``==`` but not ``!=``, so ``TorchVersion("2.13.0") != "2.13"`` is True while ``==``
says True as well).

One difference from torch: torch's TorchVersion only understands the copy of ``packaging`` it
vendors, so comparing it with a ``packaging.version.Version`` raises TypeError there; here such
a Version is compared by value. No working code depends on that TypeError.

The version parser is this module's own small PEP 440 implementation, so glasstorch does not
depend on ``packaging``.
"""

import re
import sys
from collections.abc import Iterable

from .version import __version__ as _internal_version

__all__ = ["TorchVersion"]


class InvalidVersion(ValueError):
    """A string that is not a PEP 440 version (as ``packaging.version.InvalidVersion``)."""


# PEP 440's public and local version syntax, with the spelling variants it normalises
# ("1.0-alpha.1", "1.0.post-2", "v1.0", "1.0_rc1", "1.0-1" for a post release).
_VERSION_RE = re.compile(
    r"""
    ^\s*v?
    (?:(?P<epoch>[0-9]+)!)?
    (?P<release>[0-9]+(?:\.[0-9]+)*)
    (?:[-_.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>[0-9]+)?)?
    (?:-(?P<post_implicit>[0-9]+)
       |[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n>[0-9]+)?)?
    (?:[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>[0-9]+)?)?
    (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?
    \s*$
    """, re.VERBOSE | re.IGNORECASE)

_PRE_SPELLINGS = {"alpha": "a", "a": "a", "beta": "b", "b": "b", "c": "rc", "pre": "rc",
                  "preview": "rc", "rc": "rc"}


class _Infinity:
    """Sorts after everything (a release without a pre-release tag sorts after its rcs)."""

    def __lt__(self, other):
        return False

    def __gt__(self, other):
        return not isinstance(other, _Infinity)

    def __eq__(self, other):
        return isinstance(other, _Infinity)

    def __le__(self, other):
        return self == other

    def __ge__(self, other):
        return True

    __hash__ = object.__hash__


class _NegativeInfinity:
    """Sorts before everything (no post release, no local label)."""

    def __lt__(self, other):
        return not isinstance(other, _NegativeInfinity)

    def __gt__(self, other):
        return False

    def __eq__(self, other):
        return isinstance(other, _NegativeInfinity)

    def __le__(self, other):
        return True

    def __ge__(self, other):
        return self == other

    __hash__ = object.__hash__


_INF, _NEG_INF = _Infinity(), _NegativeInfinity()


class Version:
    """A parsed PEP 440 version, ordered as ``packaging.version.Version`` orders them.

    ``Version("2.13.0+cpu").release == (2, 13, 0)``; ``str()`` gives the normalised spelling.
    Raises ``InvalidVersion`` for a string that is not a version.
    """

    __slots__ = ("epoch", "release", "pre", "post", "dev", "local", "_key")

    def __init__(self, version):
        match = _VERSION_RE.match(version)
        if match is None:
            raise InvalidVersion(f"Invalid version: {version!r}")
        g = match.groupdict()
        self.epoch = int(g["epoch"] or 0)
        self.release = tuple(int(part) for part in g["release"].split("."))
        self.pre = ((_PRE_SPELLINGS[g["pre_l"].lower()], int(g["pre_n"] or 0))
                    if g["pre_l"] else None)
        if g["post_implicit"] is not None:
            self.post = int(g["post_implicit"])
        else:
            self.post = int(g["post_n"] or 0) if g["post_l"] else None
        self.dev = int(g["dev_n"] or 0) if g["dev_l"] else None
        self.local = (tuple(int(p) if p.isdigit() else p.lower()
                            for p in re.split(r"[-_.]", g["local"]))
                      if g["local"] else None)
        self._key = self._sort_key()

    def _sort_key(self):
        release = list(self.release)
        while len(release) > 1 and release[-1] == 0:  # 1.0 == 1.0.0
            release.pop()
        if self.pre is None and self.post is None and self.dev is not None:
            pre = _NEG_INF  # 1.0.dev0 comes before 1.0a0
        else:
            pre = _INF if self.pre is None else self.pre
        post = _NEG_INF if self.post is None else self.post
        dev = _INF if self.dev is None else self.dev
        # numeric local segments sort after alphanumeric ones, as PEP 440 says
        local = (_NEG_INF if self.local is None else
                 tuple((p, "") if isinstance(p, int) else (_NEG_INF, p) for p in self.local))
        return self.epoch, tuple(release), pre, post, dev, local

    @property
    def public(self):
        """The version without its local label: ``"2.13.0"`` for ``"2.13.0+cpu"``."""
        return str(self).partition("+")[0]

    @property
    def base_version(self):
        """Epoch and release only: ``"2.13.0"`` for ``"2.13.0rc1+cpu"``."""
        epoch = f"{self.epoch}!" if self.epoch else ""
        return epoch + ".".join(str(x) for x in self.release)

    @property
    def major(self):
        """The first release number."""
        return self.release[0]

    @property
    def minor(self):
        """The second release number (0 when absent)."""
        return self.release[1] if len(self.release) > 1 else 0

    @property
    def micro(self):
        """The third release number (0 when absent)."""
        return self.release[2] if len(self.release) > 2 else 0

    @property
    def is_prerelease(self):
        """Whether this is a pre-release or a development release."""
        return self.pre is not None or self.dev is not None

    def __str__(self):
        text = self.base_version
        if self.pre is not None:
            text += f"{self.pre[0]}{self.pre[1]}"
        if self.post is not None:
            text += f".post{self.post}"
        if self.dev is not None:
            text += f".dev{self.dev}"
        if self.local is not None:
            text += "+" + ".".join(str(p) for p in self.local)
        return text

    def __repr__(self):
        return f"<Version({str(self)!r})>"

    def __hash__(self):
        return hash(self._key)

    def _other_key(self, other):
        return other._key if isinstance(other, Version) else None

    def __eq__(self, other):
        key = self._other_key(other)
        return NotImplemented if key is None else self._key == key

    def __lt__(self, other):
        key = self._other_key(other)
        return NotImplemented if key is None else self._key < key

    def __le__(self, other):
        key = self._other_key(other)
        return NotImplemented if key is None else self._key <= key

    def __gt__(self, other):
        key = self._other_key(other)
        return NotImplemented if key is None else self._key > key

    def __ge__(self, other):
        key = self._other_key(other)
        return NotImplemented if key is None else self._key >= key


def _is_packaging_version(obj):
    # only a program that imported packaging can hold one of its Versions: no import here
    module = sys.modules.get("packaging.version")
    return module is not None and isinstance(obj, module.Version)


class TorchVersion(str):
    """A ``str`` holding a version that compares as a version with strings, tuples and
    Version objects: ``TorchVersion("2.13.0+cpu") >= "2.6"``, ``>= (2, 6)``.

    When either side is not a valid version the comparison is plain ``str`` comparison.
    """

    __slots__ = ()

    def _convert_to_version(self, other):
        """``other`` as a ``Version``: a string is parsed, a tuple ``(2, 6)`` is "2.6"."""
        if isinstance(other, Version):
            return other
        if isinstance(other, str):
            return Version(other)
        if _is_packaging_version(other):
            return Version(str(other))
        if isinstance(other, Iterable):
            return Version(".".join(str(item) for item in other))
        raise InvalidVersion(f"Invalid version: {other!r}")

    def _compare(self, other, method):
        try:
            return getattr(Version(self), method)(self._convert_to_version(other))
        except InvalidVersion:
            # "parrot" > "2.0" and friends: ordinary string order, NotImplemented for non-str
            return getattr(str, method)(self, other)

    def __eq__(self, other):
        return self._compare(other, "__eq__")

    def __lt__(self, other):
        return self._compare(other, "__lt__")

    def __le__(self, other):
        return self._compare(other, "__le__")

    def __gt__(self, other):
        return self._compare(other, "__gt__")

    def __ge__(self, other):
        return self._compare(other, "__ge__")

    # defining __eq__ would drop the inherited hash; a TorchVersion hashes as its string
    __hash__ = str.__hash__


__version__ = TorchVersion(_internal_version)
