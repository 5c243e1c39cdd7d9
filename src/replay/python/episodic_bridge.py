"""episodic's Python policy bridge: runs a Python policy callable for
`episodic replay run --policy py:package.module:attr` (or `--policy file.py:attr`).

Started by episodic as `python3 episodic_bridge.py` with its working directory
on sys.path; needs Python >= 3.9 and numpy, nothing else. It talks to episodic
over its standard input and output in binary frames, and moves the policy's
own prints to standard error so they cannot corrupt a frame.

Frame: u32 little-endian length N, then N bytes: one kind byte, then the body.
episodic -> bridge
  L  load:  UTF-8 JSON {"target": "pkg.mod:attr" | "/path/file.py:attr", "cwd": "..."}
  R  reset: UTF-8 JSON {"episodeIndex": i, "baselineEpisodeId": "...", "steps": n, "metadata": {...}}
  S  step:  u32 episodeIndex, u32 step, u16 count, then count arrays
  P  play:  u32 episodeIndex, u32 steps, u16 count, then count arrays holding the
            whole episode (leading dimension = step; 0-d arrays go to every step)
bridge -> episodic
  K  ok:    UTF-8 JSON (load: what was found; reset: {})
  A  action: u16 count, then count entries
  B  batch: the answer to P. One byte 0, u32 steps, u16 count, then count entries
            each stacking every step's value (an .npy file whose leading dimension
            is the step, or a JSON list of per-step numbers; `_outcome` as a JSON
            list of [step, value] for the steps that returned one); or, when the
            steps' keys, shapes or dtypes differ, one byte 1, u32 steps, then per
            step a u32 length, zero bytes up to the next multiple of 64 and an A
            body (kind byte included).
  E  error: UTF-8 text, "ExceptionType: message" then the Python traceback
  F  failed: u32 step, then the text of an E (the answer to P when a step raised)
Array (in S, P): u16 key length, key (UTF-8), u32 NPY length, zero bytes up to
the next multiple of 64 from the start of the body, then one .npy file (header
and data; the header pads the data to a 64-byte boundary too).
Entry (in A, B): u16 key length, key, one byte 'n' (an .npy file), 'j' (UTF-8
JSON: numbers and `_outcome`) or 'x' (UTF-8 text: why the value is not numbers),
u32 length, zero bytes up to the next multiple of 64 from the start of the body,
then the payload. JSON has no NaN or infinity: in `_outcome` one travels as
{"__nonfinite__": "nan" | "inf" | "-inf"}, so episodic checks the value it was
(a number is never sent so; it goes as a 0-d .npy).

A whole episode in one P frame costs one round trip instead of one per step:
replay is open loop, so every observation is known before the first action.
"""

import ast
import faulthandler
import importlib
import importlib.util
import inspect
import json
import math
import os
import signal
import struct
import sys
import traceback

import numpy as np

U32 = struct.Struct("<I")
U16 = struct.Struct("<H")
STEP = struct.Struct("<IIH")
HEADERS = {}  # .npy header bytes -> (dtype, shape), parsed once per distinct header
OUT_HEADERS = {}  # (dtype.str, shape) -> .npy header bytes


def pad64(n):
    return (n + 63) & ~63


class Frames:
    """Frames from a pipe, read in large chunks: everything already queued arrives with one
    system call, and `ready()` says whether a whole frame is buffered (when none is, the
    bridge flushes its answers before it blocks; it also flushes them before the policy runs).
    A frame larger than what is buffered (a whole episode) is read straight into its own buffer."""

    def __init__(self, fd):
        self.fd, self.buf, self.pos = fd, bytearray(), 0

    def ready(self):
        avail = len(self.buf) - self.pos
        return avail >= 4 and avail >= 4 + U32.unpack_from(self.buf, self.pos)[0]

    def next(self):
        while len(self.buf) - self.pos < 4:
            self.fill()
        n = U32.unpack_from(self.buf, self.pos)[0]
        start = self.pos + 4
        if len(self.buf) - start >= n:
            body = self.buf[start:start + n]  # a fresh buffer: the policy's arrays view it
            self.pos = start + n
            return body
        body = bytearray(n)
        have = len(self.buf) - start
        body[:have] = memoryview(self.buf)[start:]
        self.buf, self.pos = bytearray(), 0
        view = memoryview(body)
        while have < n:
            got = os.readv(self.fd, [view[have:]])
            if not got:
                raise EOFError
            have += got
        return body

    def fill(self):
        if self.pos:
            del self.buf[:self.pos]
            self.pos = 0
        data = os.read(self.fd, 1 << 20)
        if not data:
            raise EOFError
        self.buf += data


def wider_pipe(fd):
    """Linux: a 1 MiB pipe buffer instead of 64 KiB, so an episode crosses in fewer turns."""
    try:
        import fcntl
        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
    except (ImportError, OSError):
        pass


def write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def flush(fd, answers):
    """Writes the answers held so far; False when episodic is gone (its end of the pipe closed)."""
    try:
        write_all(fd, b"".join(answers))
    except BrokenPipeError:
        return False
    answers.clear()
    return True


def frame(kind, body):
    return U32.pack(len(body) + 1) + kind + body


def parse_npy(buf, at, length):
    major = buf[at + 6]
    if major == 1:
        hlen, start = U16.unpack_from(buf, at + 8)[0], at + 10
    else:
        hlen, start = U32.unpack_from(buf, at + 8)[0], at + 12
    key = bytes(buf[start:start + hlen])
    parsed = HEADERS.get(key)
    if parsed is None:
        header = ast.literal_eval(key.decode("latin1"))
        if header["fortran_order"]:
            raise ValueError("fortran_order arrays are not sent by episodic")
        parsed = (np.dtype(header["descr"]), tuple(header["shape"]))
        HEADERS[key] = parsed
    dtype, shape = parsed
    count = 1
    for d in shape:
        count *= d
    return np.frombuffer(buf, dtype, count, start + hlen).reshape(shape)


def parse_arrays(body):
    """The arrays of an S or P body (after its u32, u32, u16 head), viewing the body."""
    count = U16.unpack_from(body, 9)[0]
    at, arrays = 11, {}
    for _ in range(count):
        klen = U16.unpack_from(body, at)[0]
        key = body[at + 2:at + 2 + klen].decode()
        nlen = U32.unpack_from(body, at + 2 + klen)[0]
        at = pad64(at + 6 + klen)
        arrays[key] = parse_npy(body, at, nlen)
        at += nlen
    return arrays


def npy_bytes(array):
    key = (array.dtype.str, array.shape)
    header = OUT_HEADERS.get(key)
    if header is None:
        shape = "(%s)" % "".join("%d," % d for d in array.shape) if array.shape else "()"
        text = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (array.dtype.str, shape)
        total = pad64(10 + len(text) + 1)
        header = b"\x93NUMPY\x01\x00" + U16.pack(total - 10) + text.encode("latin1") + b" " * (total - 10 - len(text) - 1) + b"\n"
        OUT_HEADERS[key] = header
    return header + np.ascontiguousarray(array).tobytes()


def checked(action, step):
    """The action's entries as (key, kind, value): 'j' for `_outcome` and Python numbers, 'n' for arrays."""
    if not isinstance(action, dict):
        # The step is named once, by the error's "(step N)".
        raise TypeError("policy returned %s; expected a dict keyed by namespace" % type(action).__name__)
    out = []
    for key, value in action.items():
        if not isinstance(key, str):
            raise TypeError("policy returned a non-string key %r" % (key,))
        if key == "_outcome" or (isinstance(value, (bool, int, float)) and not isinstance(value, np.generic) and not nonfinite(value)):
            out.append((key, "j", value))
            continue
        try:
            array = as_numpy(value)
        except Exception as error:  # a ragged list, say
            array, problem = None, "%s: %s" % (type(error).__name__, error)
        else:
            problem = None if array.dtype.kind in "biuf" else "has dtype %s" % array.dtype
        if problem is None:
            out.append((key, "n", array))
        else:
            # Not numbers: episodic fails the episode only if the baseline has this key (extra keys are ignored).
            out.append((key, "x", "action %r at step %d %s; expected numbers" % (key, step, problem)))
    return out


def as_numpy(value):
    """An action value as a numpy array: numpy and Python values, JAX arrays (through
    np.asarray), and PyTorch tensors on any device, with or without grad (found by
    their methods, torch is not imported); bfloat16 becomes float32."""
    if not isinstance(value, np.ndarray) and all(hasattr(value, name) for name in ("detach", "cpu", "numpy")):
        tensor = value.detach().cpu()
        if str(getattr(tensor, "dtype", "")) == "torch.bfloat16":
            tensor = tensor.float()
        value = tensor.numpy()
    array = np.asarray(value)
    if array.dtype.name == "bfloat16":  # JAX's (ml_dtypes), which numpy cannot compute with
        array = array.astype(np.float32)
    return array


def nonfinite(value):
    """NaN and the infinities travel as 0-d arrays: JSON has no spelling for them."""
    return isinstance(value, float) and not math.isfinite(value)


def encode_entries(entries, size):
    """Entries (key, kind, payload bytes) laid out after `size` bytes of body (kind byte included)."""
    parts = []
    for key, kind, payload in entries:
        name = key.encode()
        head = U16.pack(len(name)) + name + kind + U32.pack(len(payload))
        size += len(head)
        padded = pad64(size) - size
        parts.append(head + b"\x00" * padded)
        parts.append(payload)
        size += padded + len(payload)
    return b"".join(parts)


def entry_payload(key, kind, value):
    if kind == "n":
        return (key, b"n", npy_bytes(value))
    if kind == "x":
        return (key, b"x", value.encode())
    return (key, b"j", (outcome_json(value) if key == "_outcome" else json.dumps(value)).encode())


def encode_action(action, step):
    entries = checked(action, step)
    return U16.pack(len(entries)) + encode_entries([entry_payload(*e) for e in entries], 3)


def encode_batch(actions):
    """The B body (after its kind byte) for every step's checked entries: stacked when the steps agree."""
    steps = len(actions)
    first = [(key, kind) for key, kind, _ in actions[0] if key != "_outcome"] if steps else []
    stacked = []
    for position, (key, kind) in enumerate(first):
        values = []
        for entries in actions:
            own = [e for e in entries if e[0] != "_outcome"]
            if len(own) != len(first) or own[position][0] != key or own[position][1] != kind:
                return encode_per_step(actions)
            values.append(own[position][2])
        if kind == "x":
            return encode_per_step(actions)
        if kind == "j":
            stacked.append((key, b"j", json.dumps(values).encode()))
            continue
        if any(v.dtype != values[0].dtype or v.shape != values[0].shape for v in values):
            return encode_per_step(actions)
        stacked.append((key, b"n", npy_bytes(np.stack(values))))
    outcomes = [[step, value] for step, entries in enumerate(actions) for key, _, value in entries if key == "_outcome"]
    if outcomes:
        stacked.append(("_outcome", b"j", outcome_json(outcomes).encode()))
    return b"\x00" + U32.pack(steps) + U16.pack(len(stacked)) + encode_entries(stacked, 8)


def encode_per_step(actions):
    parts, size = [b"\x01" + U32.pack(len(actions))], 6
    for step, entries in enumerate(actions):
        body = b"A" + U16.pack(len(entries)) + encode_entries([entry_payload(*e) for e in entries], 3)
        padded = pad64(size + 4) - size - 4
        parts.append(U32.pack(len(body)) + b"\x00" * padded)
        parts.append(body)
        size += 4 + padded + len(body)
    return b"".join(parts)


def outcome_json(value):
    """`_outcome` (or a list of them) as JSON: numpy scalars and arrays as Python values, and
    NaN and the infinities tagged, since json.dumps would write `NaN`, which no JSON parser reads;
    episodic then rejects them as it rejects them from a JavaScript policy."""
    return json.dumps(plain(value), allow_nan=False)


def plain(value):
    if isinstance(value, (np.generic, np.ndarray)):
        value = value.tolist()  # numpy scalars and arrays, as Python values
    if isinstance(value, float):
        return value if math.isfinite(value) else {"__nonfinite__": "nan" if math.isnan(value) else "inf" if value > 0 else "-inf"}
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if value is None or isinstance(value, (str, int)):
        return value
    raise TypeError("_outcome value %r is not JSON-serializable" % (value,))


def accepts(fn, count):
    try:
        inspect.signature(fn).bind(*([None] * count))
        return True
    except TypeError:
        return False
    except ValueError:  # builtins without a signature: assume the spec's one-argument form
        return count == 1


def load(target, cwd):
    spec, _, attr = target.rpartition(":")
    if not spec or not attr:
        raise ValueError("policy must be MODULE:ATTR (got %r)" % target)
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    if spec.endswith(".py"):
        path = os.path.join(cwd, spec)
        name = "episodic_policy_" + os.path.splitext(os.path.basename(path))[0]
        module_spec = importlib.util.spec_from_file_location(name, path)
        if module_spec is None:
            raise ImportError("cannot load %s" % path)
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[name] = module
        sys.path.insert(0, os.path.dirname(path))
        module_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(spec)
    holder, value = None, module
    for part in attr.split("."):
        holder, value = value, getattr(value, part, None)
        if value is None:
            raise AttributeError("%s has no attribute %r (missing %r)" % (spec, attr, part))
    if not callable(value):
        raise TypeError("%s:%s is a %s, not a callable" % (spec, attr, type(value).__name__))
    reset = getattr(holder, "reset", None)
    return value, reset if callable(reset) else None


def error_text():
    kind, value, _ = sys.exc_info()
    first = "%s: %s" % (kind.__name__, value) if str(value) else kind.__name__
    return ("%s\n%s" % (first, traceback.format_exc())).encode()


def main():
    # Ctrl-C in the terminal reaches this process too: episodic decides what stops (and says
    # so); the bridge ends quietly when its input closes instead of printing a KeyboardInterrupt.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A crash in native code (SIGSEGV, SIGABRT, ...) prints the Python stack of the call that
    # crashed to standard error (the replay's), which episodic's error for the episode points to.
    faulthandler.enable()
    fd_in, fd_out = os.dup(0), os.dup(1)
    wider_pipe(fd_in)
    wider_pipe(fd_out)
    frames, answers = Frames(fd_in), []
    # The policy's prints (Python's and C libraries') go to standard error; stdin reads nothing.
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    sys.stdout = sys.stderr
    policy = reset = None
    with_context = reset_with_context = False
    episodes = {}
    while True:
        if answers and not frames.ready() and not flush(fd_out, answers):
            return
        try:
            body = frames.next()
        except EOFError:
            return
        kind = body[0:1]
        # Out before the policy's code runs: if it takes the process down, every request
        # answered so far has its answer, and episodic knows which one was running (for S,
        # which step: a write per step costs less than the step's own frame).
        if answers and kind in (b"P", b"R", b"S") and not flush(fd_out, answers):
            return
        try:
            if kind == b"P":
                index, steps, _ = STEP.unpack_from(body, 1)
                arrays = parse_arrays(body)
                scalars = {k: a for k, a in arrays.items() if a.ndim == 0}
                stepped = [(k, a) for k, a in arrays.items() if a.ndim > 0]
                base = episodes.get(index) or {"episodeIndex": index, "baselineEpisodeId": "", "steps": steps}
                actions, step = [], 0
                try:
                    for step in range(steps):
                        observation = dict(scalars)
                        for k, a in stepped:
                            observation[k] = a[step, ...]  # a 0-d array for 1-d streams, as S sends
                        if with_context:
                            context = dict(base)
                            context["step"] = step
                            action = policy(observation, context)
                        else:
                            action = policy(observation)
                        actions.append(checked(action, step))
                    answers.append(frame(b"B", encode_batch(actions)))
                # sys.exit() or a KeyboardInterrupt raised in a policy fails its episode, with the traceback
                # (uncaught, a KeyboardInterrupt would end the process by SIGINT, without saying where).
                except (Exception, SystemExit, KeyboardInterrupt):
                    answers.append(frame(b"F", U32.pack(step) + error_text()))
            elif kind == b"S":
                index, step, _ = STEP.unpack_from(body, 1)
                observation = parse_arrays(body)
                if with_context:
                    context = dict(episodes[index])
                    context["step"] = step
                    action = policy(observation, context)
                else:
                    action = policy(observation)
                answers.append(frame(b"A", encode_action(action, step)))
            elif kind == b"R":
                context = json.loads(body[1:].decode())
                episodes[context["episodeIndex"]] = context
                if len(episodes) > 64:
                    del episodes[min(episodes)]
                if reset is not None:
                    reset(dict(context)) if reset_with_context else reset()
                answers.append(frame(b"K", b"{}"))
            elif kind == b"L":
                request = json.loads(body[1:].decode())
                policy, reset = load(request["target"], request.get("cwd") or os.getcwd())
                with_context = accepts(policy, 2)
                reset_with_context = reset is not None and accepts(reset, 1)
                info = {"reset": reset is not None, "context": with_context, "python": sys.version.split()[0], "numpy": np.__version__}
                answers.append(frame(b"K", json.dumps(info).encode()))
            else:
                raise ValueError("unknown frame kind %r" % kind)
        except (Exception, SystemExit, KeyboardInterrupt):
            answers.append(frame(b"E", error_text()))


if __name__ == "__main__":
    main()
