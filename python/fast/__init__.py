"""fast: all-to-all(v) schedules for two-tier GPU clusters, from Python.

A pure-Python package over libfast.so (include/fast/api.h) through ctypes:
nothing is compiled at install time.  NumPy arrays go in and out.

    import fast, numpy as np
    topo = fast.Topology.preset("h200", servers=2)
    traffic = fast.Traffic(np.full((16, 16), 1 << 20, dtype=np.uint64))
    plan = fast.compile(topo, traffic, algo="fast")
    print(fast.sim(topo, traffic, plan)["plans"][0]["time_s"])

The results of sim(), bound() and compare() are the dicts of the command
line's --json (schemas/ describes them); plan files are byte for byte what
`fast plan -o` writes.  Bad input raises fast.InputError (a ValueError and
a fast.Error) with the command line's message; an incorrect plan
fast.CheckError.

Where libfast.so is found, first match wins: $FAST_LIBRARY (a path to the
library); the installed layout (PREFIX/lib/libfast.so.0 for the package in
PREFIX/lib/python3/dist-packages/fast); the source tree's build/lib/ (the
package in python/fast of a built checkout); then the dynamic loader's
search path (ldconfig, LD_LIBRARY_PATH).
"""
import ctypes
import json
import os

import numpy as np

__all__ = ["Error", "InputError", "CheckError", "Topology", "Traffic", "Plan", "compile",
           "sim", "bound", "compare", "version", "algorithms"]

# --- the library -------------------------------------------------------------

_HERE = os.path.dirname(os.path.abspath(__file__))
_SONAME = "libfast.so.0"


def _candidates():
    env = os.environ.get("FAST_LIBRARY")
    if env:
        return [env]
    return [os.path.join(_HERE, "..", "..", "..", _SONAME),        # PREFIX/lib/python3/dist-packages/fast
            os.path.join(_HERE, "..", "..", "build", "lib", _SONAME),  # python/fast in a built checkout
            _SONAME]


def _load():
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            return ctypes.CDLL(os.path.normpath(path) if os.sep in path else path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError("fast: libfast.so not found (tried %s); build it with make, install it "
                      "with make install, or set FAST_LIBRARY" % ", ".join(tried))


_lib = _load()


class _Err(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("msg", ctypes.c_char * 512)]


class _ProgInfo(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_uint32), ("ng", ctypes.c_uint32), ("passes", ctypes.c_uint32),
                ("nwaves", ctypes.c_uint32), ("kind", ctypes.c_uint32), ("nmsgs", ctypes.c_uint32),
                ("staging_bytes", ctypes.c_uint64), ("nsends", ctypes.c_uint64),
                ("nrecvs", ctypes.c_uint64), ("ncopies", ctypes.c_uint64),
                ("plan_hash", ctypes.c_uint64)]


_P = ctypes.c_void_p
_PP = ctypes.POINTER(ctypes.c_void_p)
_S = ctypes.c_char_p
_U32 = ctypes.c_uint32
_U32P = ctypes.POINTER(ctypes.c_uint32)
_SZ = ctypes.c_size_t
_E = ctypes.POINTER(_Err)
_STRS = ctypes.POINTER(ctypes.c_char_p)
_U64P = ctypes.POINTER(ctypes.c_uint64)
_I = ctypes.c_int

_SIGS = {
    "version": (_S, []),
    "algo_list": (None, [ctypes.c_char_p, _SZ]),
    "string_free": (None, [_P]),
    "topo_preset": (_I, [_S, _U32, _U32, _PP, _E]),
    "topo_load": (_I, [_S, _PP, _E]),
    "topo_parse": (_I, [_S, _S, _PP, _E]),
    "topo_shape": (None, [_P, _U32P, _U32P]),
    "topo_name": (None, [_P, ctypes.c_char_p, _SZ]),
    "topo_json": (_I, [_P, _PP, _E]),
    "topo_hash": (ctypes.c_uint64, [_P]),
    "topo_set_nics": (_I, [_P, _U32, _U32P, _U32P, ctypes.POINTER(ctypes.c_double), _SZ, _E]),
    "topo_free": (None, [_P]),
    "traffic_new_u64": (_I, [_U32, _U32, _P, _PP, _E]),
    "traffic_new_i64": (_I, [_U32, _U32, _P, _PP, _E]),
    "traffic_load": (_I, [_S, _PP, _E]),
    "traffic_parse": (_I, [_S, _S, _PP, _E]),
    "traffic_shape": (None, [_P, _U32P, _U32P]),
    "traffic_matrix": (_I, [_P, _U32, _P, ctypes.c_char_p, _SZ, _U32P, _E]),
    "traffic_json": (_I, [_P, _PP, _E]),
    "traffic_free": (None, [_P]),
    "compile": (_I, [_P, _P, _S, _STRS, _STRS, _SZ, _PP, _E]),
    "plans_load": (_I, [_S, _PP, _E]),
    "plans_parse": (_I, [_S, _S, _PP, _E]),
    "plans_json": (_I, [_P, _PP, _E]),
    "plans_count": (_U32, [_P]),
    "plan_info": (_I, [_P, _U32, ctypes.c_char_p, ctypes.c_char_p, _SZ, _U32P, _E]),
    "plans_free": (None, [_P]),
    "check": (_I, [_P, _P, _P, _E]),
    "bound_json": (_I, [_P, _P, _I, _I, _PP, _E]),
    "sim_json": (_I, [_P, _P, _P, _STRS, _STRS, _SZ, _PP, _E]),
    "auto_json": (_I, [_P, _P, _STRS, _STRS, _SZ, _STRS, _STRS, _SZ, _PP, _E]),
    "prog_build": (_I, [_P, _P, _U32, _U32, _U32, _PP, _E]),
    "prog_info": (None, [_P, ctypes.POINTER(_ProgInfo)]),
    "prog_arrays": (None, [_P, _P, _P, _P, _P]),
    "prog_free": (None, [_P]),
}
_f = {}
for _name, (_res, _args) in _SIGS.items():
    _fn = getattr(_lib, "fast_api_" + _name)
    _fn.restype = _res
    _fn.argtypes = _args
    _f[_name] = _fn

# --- errors --------------------------------------------------------------------

_CATEGORY = {-1: "bad input", -2: "check failed", -3: "usage", -4: "out of memory",
             -5: "i/o error", -6: "limit exceeded", -7: "solver failure", -8: "runtime failure"}


class Error(Exception):
    """A failure of the library: str() is the command line's message (what
    `fast` prints after "fast: CATEGORY: "), .code the FAST_E* code, .status
    the command line's exit status, .category its category."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message
        self.category = _CATEGORY.get(code, "error")
        self.status = {-1: 3, -2: 1, -3: 2, -6: 3}.get(code, 4)


class InputError(Error, ValueError):
    """Bad input or usage: a value, file or option the library refuses."""


class CheckError(Error):
    """A plan that is not correct for its traffic (exit status 1)."""


def _raise(code, message):
    if code == -2:
        raise CheckError(code, message)
    if code in (-1, -3, -6):
        raise InputError(code, message)
    raise Error(code, message)


def _call(name, *args):
    err = _Err()
    rc = _f[name](*args, ctypes.byref(err))
    if rc < 0:
        _raise(err.code, err.msg.decode("utf-8", "replace"))
    return rc


def _take_string(p):
    try:
        return ctypes.string_at(p.value).decode("utf-8")
    finally:
        _f["string_free"](p)


def _save(path, text):
    """text into the file at path as the command line writes its outputs:
    into a temporary file beside it, renamed over it only once whole, so a
    failure (a full disk, an error before the text is made) never leaves
    half a file or loses the one that was there; the temporary file is
    removed on failure."""
    path = os.fspath(path)
    tmp = os.path.join(os.path.dirname(os.path.abspath(path)),
                       ".%s.tmp%d" % (os.path.basename(path), os.getpid()))
    try:
        with open(tmp, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise


def _b(s):
    return s.encode("utf-8") if isinstance(s, str) else s


def _options(opts):
    """(names, values, n) of a dict, as C string arrays; None values dropped."""
    items = [(str(k), _opt_text(v)) for k, v in opts.items() if v is not None]
    names = (ctypes.c_char_p * max(len(items), 1))(*[_b(k) for k, _ in items])
    values = (ctypes.c_char_p * max(len(items), 1))(*[_b(v) for _, v in items])
    return names, values, len(items)


def _opt_text(v):
    if v is True:
        return "on"
    if v is False:
        return "off"
    return str(v)


def version():
    """The library's version, "0.1.0 (api 1)"."""
    return _f["version"]().decode()


def algorithms():
    """The algorithms compile() takes, in the table's order."""
    buf = ctypes.create_string_buffer(256)
    _f["algo_list"](buf, len(buf))
    return [a.strip() for a in buf.value.decode().split(",") if a.strip()]


class _Handle:
    _free = None

    def __init__(self, handle):
        self._h = handle

    def __del__(self):
        h, self._h = getattr(self, "_h", None), None
        if h and _f:
            _f[self._free](h)


# --- topology ------------------------------------------------------------------

class Topology(_Handle):
    """A two-tier fabric: N servers of G GPUs (a preset or a JSON file).

    nics=K and nic={(server, nic): fraction} (or [(server, nic, fraction)])
    are the CLI's --nics K and --nic S:K=F: K NICs per server, and NICs at a
    fraction of their rate (0 = down), applied after loading."""
    _free = "topo_free"

    @classmethod
    def preset(cls, name, servers=None, gpus=None, nics=None, nic=None):
        h = ctypes.c_void_p()
        _call("topo_preset", _b(name), int(servers or 0), int(gpus or 0), ctypes.byref(h))
        return cls(h)._with_nics(nics, nic)

    @classmethod
    def load(cls, path, nics=None, nic=None):
        h = ctypes.c_void_p()
        _call("topo_load", _b(os.fspath(path)), ctypes.byref(h))
        return cls(h)._with_nics(nics, nic)

    @classmethod
    def parse(cls, text, name="topology", nics=None, nic=None):
        h = ctypes.c_void_p()
        _call("topo_parse", _b(text), _b(name), ctypes.byref(h))
        return cls(h)._with_nics(nics, nic)

    def _with_nics(self, nics, nic):
        if nics is None and not nic:
            return self
        items = list(nic.items()) if isinstance(nic, dict) else [((s, k), f) for s, k, f in nic or []]
        n = len(items)
        srv = (ctypes.c_uint32 * max(n, 1))(*[int(sk[0]) for sk, _ in items])
        idx = (ctypes.c_uint32 * max(n, 1))(*[int(sk[1]) for sk, _ in items])
        frac = (ctypes.c_double * max(n, 1))(*[float(f) for _, f in items])
        if nics is not None and int(nics) < 1:
            raise ValueError("fast: usage: nics: %d is not a NIC count (>= 1)" % int(nics))
        _call("topo_set_nics", self._h, int(nics or 0), srv, idx, frac, n)
        return self

    @property
    def identity(self):
        """The fabric's 64-bit hash (shape, model numbers, NICs; not the name):
        equal for topologies that plan and simulate alike."""
        return _f["topo_hash"](self._h)

    def _shape(self):
        s, g = ctypes.c_uint32(), ctypes.c_uint32()
        _f["topo_shape"](self._h, ctypes.byref(s), ctypes.byref(g))
        return s.value, g.value

    @property
    def servers(self):
        return self._shape()[0]

    @property
    def gpus(self):
        """GPUs per server."""
        return self._shape()[1]

    @property
    def gpus_total(self):
        s, g = self._shape()
        return s * g

    @property
    def name(self):
        buf = ctypes.create_string_buffer(128)
        _f["topo_name"](self._h, buf, len(buf))
        return buf.value.decode()

    def json(self):
        """The normalised topology as a dict (every field explicit)."""
        p = ctypes.c_void_p()
        _call("topo_json", self._h, ctypes.byref(p))
        return json.loads(_take_string(p))

    def __repr__(self):
        return "fast.Topology(%r, servers=%d, gpus=%d)" % (self.name, self.servers, self.gpus)


# --- traffic -------------------------------------------------------------------

def _as_matrices(matrices):
    """A (count, P, P) integer array of a P x P matrix or a list of them."""
    try:
        return _as_matrices_(matrices)
    except (ValueError, TypeError) as e:
        if isinstance(e, Error):
            raise
        raise InputError(-1, "traffic: not a matrix of byte counts (%s)" % e) from None


def _as_matrices_(matrices):
    if isinstance(matrices, (list, tuple)) and matrices and not np.isscalar(matrices[0]) \
            and np.ndim(matrices[0]) == 2:
        arrs = [np.asarray(m) for m in matrices]
        shapes = {a.shape for a in arrs}
        if len(shapes) != 1:
            raise InputError(-1, "traffic: the matrices differ in shape (%s)" %
                             ", ".join("%dx%d" % s for s in sorted(shapes)))
        a = np.stack(arrs)
    else:
        a = np.asarray(matrices)
        if a.ndim == 2:
            a = a[np.newaxis]
    if a.ndim != 3 or a.shape[1] != a.shape[2] or a.shape[1] == 0 or a.shape[0] == 0:
        raise InputError(-1, "traffic: give a P x P matrix or a list of them (got shape %s)"
                         % (a.shape,))
    if a.dtype.kind == "f":
        if not np.all(np.isfinite(a)) or not np.all(a == np.floor(a)):
            raise InputError(-1, "traffic: bytes must be whole numbers")
        if np.any(a < 0):
            raise InputError(-1, "traffic: bytes must be non-negative")
        if np.any(a > 2.0 ** 53):
            raise InputError(-1, "traffic: bytes must be at most 2^53")
        a = a.astype(np.uint64)
    elif a.dtype.kind == "b":
        a = a.astype(np.uint64)
    elif a.dtype.kind not in "iu":
        raise InputError(-1, "traffic: bytes must be integers (got dtype %s)" % a.dtype)
    return a


class Traffic(_Handle):
    """One or more P x P byte matrices: D[s][d] bytes from GPU s to GPU d.

    Traffic(matrix) or Traffic([m0, m1, ...]) copies NumPy arrays (or nested
    lists) of integers; Traffic.load(path) reads a traffic file (JSON, token
    traffic included, or an nccl-tests matrix)."""
    _free = "traffic_free"

    def __init__(self, matrices=None, _handle=None):
        if _handle is not None:
            super().__init__(_handle)
            return
        a = _as_matrices(matrices)
        signed = a.dtype.kind == "i"
        a = np.ascontiguousarray(a, dtype=np.int64 if signed else np.uint64)
        h = ctypes.c_void_p()
        _call("traffic_new_i64" if signed else "traffic_new_u64", a.shape[1], a.shape[0],
              a.ctypes.data_as(ctypes.c_void_p), ctypes.byref(h))
        super().__init__(h)

    @classmethod
    def load(cls, path):
        h = ctypes.c_void_p()
        _call("traffic_load", _b(os.fspath(path)), ctypes.byref(h))
        return cls(_handle=h)

    @classmethod
    def parse(cls, text, name="traffic"):
        h = ctypes.c_void_p()
        _call("traffic_parse", _b(text), _b(name), ctypes.byref(h))
        return cls(_handle=h)

    @classmethod
    def tokens(cls, gpus, groups, token_bytes, kind="dispatch", label=None):
        """One token matrix (MoE dispatch or combine, docs/formats.md):
        groups [(src, [dsts], tokens), ...], each `tokens` tokens of
        token_bytes bytes of GPU src whose experts are on the GPUs dsts
        (ascending, distinct); the groups stay in the order given (a
        program's buffers are laid out in it).  Read through the traffic
        file's loader, so its checks and messages are the command line's."""
        if kind not in ("dispatch", "combine"):
            raise InputError(-3, "traffic: kind must be dispatch or combine (got %r)" % (kind,))
        m = {"kind": kind, "token_bytes": int(token_bytes),
             "groups": [[int(s), [int(d) for d in ds], int(n)] for s, ds, n in groups]}
        if label:
            m["label"] = str(label)
        doc = {"version": 3, "gpus_total": int(gpus), "matrices": [m]}
        return cls.parse(json.dumps(doc, separators=(",", ":")), "token traffic")

    def _shape(self):
        p, c = ctypes.c_uint32(), ctypes.c_uint32()
        _f["traffic_shape"](self._h, ctypes.byref(p), ctypes.byref(c))
        return p.value, c.value

    @property
    def gpus(self):
        return self._shape()[0]

    def __len__(self):
        return self._shape()[1]

    def _matrix(self, k):
        p = self.gpus
        out = np.empty((p, p), dtype=np.uint64)
        label = ctypes.create_string_buffer(64)
        kind = ctypes.c_uint32()
        _call("traffic_matrix", self._h, k, out.ctypes.data_as(ctypes.c_void_p), label,
              len(label), ctypes.byref(kind))
        return out, label.value.decode(), ("bytes", "dispatch", "combine")[kind.value]

    def matrix(self, k=0):
        """Matrix k's bytes, a P x P uint64 array (token traffic: per GPU)."""
        return self._matrix(k)[0]

    @property
    def matrices(self):
        """Every matrix, a (count, P, P) uint64 array."""
        return np.stack([self._matrix(k)[0] for k in range(len(self))])

    @property
    def labels(self):
        return [self._matrix(k)[1] for k in range(len(self))]

    @property
    def kinds(self):
        """Each matrix's kind: "bytes", "dispatch" or "combine"."""
        return [self._matrix(k)[2] for k in range(len(self))]

    def json(self):
        p = ctypes.c_void_p()
        _call("traffic_json", self._h, ctypes.byref(p))
        return _take_string(p)

    def save(self, path):
        """The traffic file's text (`fast traffic convert` writes) into path."""
        _save(path, self.json())

    def __repr__(self):
        return "fast.Traffic(%d GPUs, %d matrices)" % (self.gpus, len(self))


# --- plans ---------------------------------------------------------------------

class Plan(_Handle):
    """A plan set: one plan per matrix of a traffic, as a plan file holds.
    compile() makes one, Plan.load(path) reads one."""
    _free = "plans_free"

    def __init__(self, handle, topology=None):
        super().__init__(handle)
        self.topology = topology

    @classmethod
    def load(cls, path, topology=None):
        h = ctypes.c_void_p()
        _call("plans_load", _b(os.fspath(path)), ctypes.byref(h))
        return cls(h, topology)

    @classmethod
    def parse(cls, text, name="plans", topology=None):
        h = ctypes.c_void_p()
        _call("plans_parse", _b(text), _b(name), ctypes.byref(h))
        return cls(h, topology)

    def json(self):
        """The plan file's text, as `fast plan -o` writes it."""
        p = ctypes.c_void_p()
        _call("plans_json", self._h, ctypes.byref(p))
        return _take_string(p)

    def save(self, path):
        """The plan file's text (`fast plan -o` writes) into path."""
        _save(path, self.json())

    def __len__(self):
        return _f["plans_count"](self._h)

    def info(self, i=0):
        """{"algo", "label", "matrix"} of plan i."""
        algo, label = ctypes.create_string_buffer(64), ctypes.create_string_buffer(64)
        m = ctypes.c_uint32()
        _call("plan_info", self._h, i, algo, label, 64, ctypes.byref(m))
        return {"algo": algo.value.decode(), "label": label.value.decode(), "matrix": m.value}

    @property
    def algo(self):
        return self.info(0)["algo"]

    def check(self, traffic, topology=None):
        """Prove every plan correct for the matrix it serves (`fast check`);
        raises CheckError naming the first incorrect one, returns True."""
        topology = topology or self.topology
        if topology is None:
            raise InputError(-3, "check: give the topology (this plan was loaded without one)")
        _call("check", topology._h, traffic._h, self._h)
        return True

    def program(self, traffic, rank, index=0, passes=1):
        """Rank rank's program of plan index (what `fast run` executes,
        include/fast/prog.h) as NumPy arrays: "waves" (n, 8): pre0, npre,
        send0, nsend, recv0, nrecv, post0, npost; "sends"/"recvs" (n, 6):
        peer, out, loc kind (0 send buf, 1 recv buf, 2 staging), loc msg,
        loc offset, bytes; "copies" (n, 8): dst kind, msg, offset, src kind,
        msg, offset, bytes, op (0 copy, 1 add, 2 zero); and "info"."""
        h = ctypes.c_void_p()
        _call("prog_build", traffic._h, self._h, index, rank, passes, ctypes.byref(h))
        try:
            info = _ProgInfo()
            _f["prog_info"](h, ctypes.byref(info))
            arrs = {"waves": np.zeros((info.nwaves, 8), np.uint64),
                    "sends": np.zeros((info.nsends, 6), np.uint64),
                    "recvs": np.zeros((info.nrecvs, 6), np.uint64),
                    "copies": np.zeros((info.ncopies, 8), np.uint64)}
            _f["prog_arrays"](h, *[arrs[k].ctypes.data_as(ctypes.c_void_p)
                                  for k in ("waves", "sends", "recvs", "copies")])
        finally:
            _f["prog_free"](h)
        arrs["info"] = {k: getattr(info, k) for k, _ in _ProgInfo._fields_}
        arrs["info"]["kind"] = ("bytes", "dispatch", "combine")[info.kind]
        return arrs

    def __repr__(self):
        return "fast.Plan(%d plans, algo %r)" % (len(self), self.algo if len(self) else None)


def _traffic(t):
    return t if isinstance(t, Traffic) else Traffic(t)


def compile(topology, traffic, algo="fast", **options):
    """Compile a plan per matrix with algo (fast.algorithms(); "auto"
    chooses by the simulator) and the compiler options of the command line
    (stages="exact", order="largest-first", peers=4, chunk="1M",
    dedup="gpu", ...): the plans `fast plan` writes for the same inputs."""
    traffic = _traffic(traffic)
    names, values, n = _options(options)
    h = ctypes.c_void_p()
    _call("compile", topology._h, traffic._h, _b(algo), names, values, n, ctypes.byref(h))
    return Plan(h, topology)


# --- results -------------------------------------------------------------------

def sim(topology, traffic=None, plan=None, algo="fast", steps=False, congestion=True,
        sync=None, epsilon=0.0, check=True, in_flight=None, **options):
    """`fast sim --json` as a dict: plan (a Plan, or compiled from traffic
    with algo and options when None) simulated on topology; with traffic,
    the bound (LP plus latency floor) and ratio (and a given plan is first
    proved correct for it unless check=False).  sync "step" or "rank"
    (`--sync`); None: as the topology's implementation of the plan's
    schedule says.  in_flight 1 or 2: waves a GPU keeps posted by rank
    (`--in-flight`; None: one)."""
    if plan is None:
        if traffic is None:
            raise InputError(-3, "sim: give a plan, or traffic to compile")
        traffic = _traffic(traffic)
        plan = compile(topology, traffic, algo, **options)
        check = False  # just compiled: the command does not prove it either
    elif options:
        raise InputError(-3, "sim: compiler options do not apply to a given plan")
    traffic = _traffic(traffic) if traffic is not None else None
    names, values, n = _options({"steps": steps, "congestion": congestion, "sync": sync,
                                 "in_flight": in_flight, "epsilon": repr(float(epsilon)),
                                 "check": check})
    p = ctypes.c_void_p()
    _call("sim_json", topology._h, traffic._h if traffic else None, plan._h, names, values, n,
          ctypes.byref(p))
    return json.loads(_take_string(p))


def bound(topology, traffic, closed_only=False, timing=False):
    """`fast bound --json` as a dict (without "solve_s" unless timing)."""
    traffic = _traffic(traffic)
    p = ctypes.c_void_p()
    _call("bound_json", topology._h, traffic._h, int(bool(closed_only)), int(bool(timing)),
          ctypes.byref(p))
    return json.loads(_take_string(p))


def _auto_rows(topology, traffic, opts, congestion, sync, epsilon, in_flight):
    """auto's compare row per matrix (fast_api_auto_json): a list of dicts
    with the fields of a sim plan entry compare reads, and auto's."""
    names, values, n = _options(opts)
    snames, svalues, sn = _options({"congestion": congestion, "sync": sync,
                                    "in_flight": in_flight, "epsilon": repr(float(epsilon))})
    p = ctypes.c_void_p()
    _call("auto_json", topology._h, traffic._h, names, values, n, snames, svalues, sn,
          ctypes.byref(p))
    return json.loads(_take_string(p))


def _row(entry, options):
    """("name", algo, options) of a compare row "NAME[:OPT=VALUE...]"."""
    parts = entry.split(":")
    opts = dict(options)
    for kv in parts[1:]:
        if "=" not in kv:
            raise InputError(-3, "--algos: %s: '%s' is not OPTION=VALUE of a compiler option"
                             % (parts[0], kv))
        k, v = kv.split("=", 1)
        opts[k] = v
    return entry, parts[0], opts


def compare(topology, traffic, algos=None, congestion=True, sync=None, epsilon=0.0,
            in_flight=None, **options):
    """`fast compare --json --no-timing` as a dict: every algorithm (all
    but auto, or algos: names or "NAME:OPT=VALUE" rows, auto included)
    compiled and simulated on each matrix, with the bound (LP plus
    latency floor, and the LP alone), ratios,
    FAST's speedup and per-kind and overall totals.  Synthesis times are
    left out (they are measurements).  An auto row is the command's: its
    choice, predictions and candidates from the library's case evaluator
    (fast_api_auto_json)."""
    traffic = _traffic(traffic)
    if algos is None:
        algos = [a for a in algorithms() if a != "auto"]
    elif isinstance(algos, str):
        algos = algos.split(",")
    rows = [_row(a, options) for a in algos]
    fast_idx = None
    for k, (name, base, _) in enumerate(rows):
        if base == "fast" and (fast_idx is None or name == "fast"):
            fast_idx = k
    kinds = traffic.kinds
    out_ = topology.json()["scale_out"]
    ideal = out_["nics_per_server"] == topology.gpus and \
        all(o["fraction"] == 1 for o in out_.get("nic_overrides", []))
    results = []  # per row: the sim document
    for name, base, opts in rows:
        if base == "auto":
            results.append({"plans": _auto_rows(topology, traffic, opts, congestion, sync,
                                                epsilon, in_flight)})
            continue
        plan = compile(topology, traffic, base, **opts)
        results.append(sim(topology, traffic, plan, steps=True, congestion=congestion,
                           sync=sync, epsilon=epsilon, check=False, in_flight=in_flight))

    def cells(m):
        out = []
        for res in results:
            p = res["plans"][m]
            c = {"time_s": p["time_s"], "algbw": p["algbw_GBps"]}
            if "chosen" in p:  # auto's row
                c["bytes_out"] = p["bytes_out"]
                c["auto"] = {k: p[k] for k in ("chosen", "predicted_sim_s",
                                               "predicted_synthesis_s", "candidates")}
            else:
                c["bytes_out"] = sum(s["bytes"] for s in p["steps"]
                                     if s["kind"] in ("out", "rail"))
            c["nics"] = {"busiest_nic": p["busiest_nic"]}
            if not ideal:  # every NIC where they are not one per GPU at one rate
                c["nics"]["nics"] = p["nics"]
            out.append(c)
        return out

    def block(head, c, bound_s, bound=None):
        d = dict(head)
        d["bound_s"] = bound_s
        if bound is not None:  # a matrix's: the LP and latency beside it, as the command's
            d["lp_s"] = bound["lp_s"]
            d["latency_s"] = bound["latency_s"]
            d["binding"] = bound["binding"]
        f = c[fast_idx] if fast_idx is not None else None
        d["algorithms"] = []
        for k, (name, _, _) in enumerate(rows):
            a = {"algo": name, "time_s": c[k]["time_s"], "algbw_GBps": c[k]["algbw"],
                 "ratio": c[k]["time_s"] / bound_s if bound_s > 0 else 0.0}
            if f is not None and f["time_s"] > 0:
                a["fast_speedup"] = c[k]["time_s"] / f["time_s"]
            a["bytes_out"] = c[k]["bytes_out"]
            if "auto" in c[k]:
                a.update(c[k]["auto"])  # matrices only: totals carry none, as the command's
            a.update(c[k].get("nics", {}))  # matrices only, as the command's
            d["algorithms"].append(a)
        return d

    doc = {"topology": topology.name, "servers": topology.servers,
           "gpus_per_server": topology.gpus, "gpus_total": topology.gpus_total,
           "congestion": bool(congestion)}
    if sync == "rank":
        doc["sync"] = "rank"
    if in_flight is not None and str(in_flight) == "2":
        doc["in_flight"] = 2  # as the command's: only when two
    doc["matrices"] = []
    labels = traffic.labels
    zero = [{"time_s": 0.0, "algbw": 0.0, "bytes_out": 0} for _ in rows]
    total, total_bound = [dict(z) for z in zero], 0.0
    kind_total, kind_bound, kind_count = {}, {}, {}
    for m in range(len(traffic)):
        c = cells(m)
        p0 = results[0]["plans"][m]
        doc["matrices"].append(block({"matrix": m, "label": labels[m]}, c, p0["bound_s"], p0))
        kt = kind_total.setdefault(kinds[m], [dict(z) for z in zero])
        kind_bound[kinds[m]] = kind_bound.get(kinds[m], 0.0) + p0["bound_s"]
        kind_count[kinds[m]] = kind_count.get(kinds[m], 0) + 1
        total_bound += p0["bound_s"]
        for k in range(len(rows)):
            for t in (total[k], kt[k]):
                t["time_s"] += c[k]["time_s"]
                t["bytes_out"] += c[k]["bytes_out"]
    if len(kind_count) > 1:
        for kind in ("bytes", "dispatch", "combine"):
            if kind in kind_count:
                doc["matrices"].append(block({"matrix": "total", "kind": kind},
                                             kind_total[kind], kind_bound[kind]))
    if len(traffic) > 1:
        doc["matrices"].append(block({"matrix": "total"}, total, total_bound))
    return doc
