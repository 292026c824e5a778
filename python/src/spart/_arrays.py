"""
Arrays of any library, for the reusable kernels (softmax, scoring, ...):
where their memory is, its address, shape and dtype, read without a copy.

Three ways in, tried in this order:

- a NumPy array: host memory, used in place;
- ``__cuda_array_interface__`` (CuPy, PyTorch, Numba): GPU memory, with the
  stream the producer's work is queued on;
- ``__dlpack__`` / ``__dlpack_device__`` (JAX, TensorFlow, PyTorch, CuPy,
  NumPy >= 1.22, ...): a host tensor becomes a NumPy view
  (``numpy.from_dlpack``); a CUDA tensor is read from its DLPack capsule,
  which is kept alive, not consumed, for as long as the Operand is (so the
  producer keeps the memory; DLPack's rule for a capsule that was not
  taken over).

Lists and scalars are converted with ``numpy.asarray`` (a copy anyway).
Every array must be C-contiguous and of a dtype the call names; nothing is
converted behind the caller's back.
"""

from __future__ import annotations

import ctypes
from typing import Any, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from . import _core
from ._core import ffi

_DL_CPU = 1
_DL_CUDA = 2
_DL_CUDA_MANAGED = 13
_DL_FLOAT = 2
_DL_INT = 0


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


class Operand(NamedTuple):
    """A checked array: where it is and how to reach it."""

    address: int            # its first value (0 for an empty array)
    shape: Tuple[int, ...]
    dtype: np.dtype
    device: Optional[int]   # CUDA device number, None for host memory
    stream: Optional[int]   # the producer's CUDA stream (None: the default)
    keep: Any               # what must stay alive while the address is used

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def pointer(self, ctype: str):
        """The address as a cffi pointer of `ctype` (e.g. "const void *")."""
        return ffi.cast(ctype, self.address)


def _contiguous(shape, strides, itemsize):
    """Whether `strides` (in bytes; None: C order) describe a C-contiguous array."""
    if strides is None:
        return True
    step = itemsize
    for extent, stride in zip(reversed(shape), reversed(tuple(strides))):
        if extent > 1 and stride != step:
            return False
        step *= max(extent, 1)
    return True


def _check(operand, name, function, dtypes, writable, read_only):
    if operand.dtype not in dtypes:
        kinds = " or ".join(str(np.dtype(d)) for d in dtypes)
        raise _core.argument_error(function, f"{name}: a {operand.dtype} array; spart reads "
                                   f"{kinds} here (convert it once with .astype)", "type")
    if writable and read_only:
        raise _core.argument_error(function, f"{name}: a read-only array; spart writes into it")
    return operand


def _from_numpy(array, name, function, dtypes, writable):
    if not array.flags.c_contiguous:
        raise _core.argument_error(function, f"{name}: an array that is not C-contiguous "
                                   f"(shape {array.shape}, strides {array.strides}); spart "
                                   f"reads dense C-order arrays (numpy.ascontiguousarray)")
    address = array.__array_interface__["data"][0] if array.size else 0
    operand = Operand(int(address), tuple(array.shape), array.dtype, None, None, array)
    return _check(operand, name, function, dtypes, writable, not array.flags.writeable)


def _device_number(array):
    """The CUDA device of a CuPy or PyTorch array (0 when it does not say)."""
    device = getattr(array, "device", None)
    for attribute in ("id", "index"):
        number = getattr(device, attribute, None)
        if isinstance(number, int):
            return number
    return 0


def from_cuda_interface(array, interface, name, function, dtypes, writable):
    """An Operand of an array with a ``__cuda_array_interface__`` (`interface`)."""
    shape = tuple(int(d) for d in interface["shape"])
    dtype = np.dtype(interface["typestr"])
    if not _contiguous(shape, interface.get("strides"), dtype.itemsize):
        raise _core.argument_error(function, f"{name}: not C-contiguous (strides "
                                   f"{tuple(interface['strides'])}); spart reads dense "
                                   "C-order arrays (.contiguous() or cupy.ascontiguousarray)")
    address, read_only = interface["data"]
    operand = Operand(int(address), shape, dtype, _device_number(array),
                      interface.get("stream"), array)
    return _check(operand, name, function, dtypes, writable, read_only)


def _dlpack_dtype(code, bits, lanes, name, function):
    kinds = {(_DL_FLOAT, 64): np.float64, (_DL_FLOAT, 32): np.float32,
             (_DL_INT, 64): np.int64, (_DL_INT, 32): np.int32}
    if lanes != 1 or (code, bits) not in kinds:
        raise _core.argument_error(function, f"{name}: a DLPack tensor of type code {code}, "
                                   f"{bits} bits, {lanes} lanes; spart reads float64, "
                                   "float32, int64 or int32", "type")
    return np.dtype(kinds[(code, bits)])


def _from_dlpack_cuda(array, device_id, name, function, dtypes, writable):
    capsule = array.__dlpack__()
    try:
        address = _capsule_pointer(capsule, b"dltensor")
    except ValueError:
        raise _core.argument_error(function, f"{name}: its __dlpack__ gave no 'dltensor' "
                                   "capsule", "type") from None
    # DLManagedTensor starts with its DLTensor (the DLPack ABI, versions 0.x).
    tensor = _DLTensor.from_address(address)
    shape = tuple(int(tensor.shape[k]) for k in range(tensor.ndim))
    dtype = _dlpack_dtype(tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes, name,
                          function)
    strides = (None if not tensor.strides
               else tuple(int(tensor.strides[k]) * dtype.itemsize for k in range(tensor.ndim)))
    if not _contiguous(shape, strides, dtype.itemsize):
        raise _core.argument_error(function, f"{name}: a DLPack tensor that is not "
                                   f"C-contiguous (shape {shape}); spart reads dense "
                                   "C-order arrays")
    data = (tensor.data or 0) + int(tensor.byte_offset)
    # DLPack says nothing of read-only memory before version 1.0: taken as writable.
    operand = Operand(data, shape, dtype, int(device_id), None, (array, capsule))
    return _check(operand, name, function, dtypes, writable, False)


def operand(array: Any, name: str, function: str, dtypes: Sequence[Any],
            writable: bool = False) -> Operand:
    """`array` as an Operand, checked: one of `dtypes`, C-contiguous, and
    writeable when `writable`. Raises SpartTypeError or SpartValueError
    naming `name` otherwise."""
    dtypes = tuple(np.dtype(d) for d in dtypes)
    if isinstance(array, np.ndarray):
        return _from_numpy(array, name, function, dtypes, writable)
    interface = getattr(array, "__cuda_array_interface__", None)
    if interface is not None:
        return from_cuda_interface(array, interface, name, function, dtypes, writable)
    if hasattr(array, "__dlpack__") and hasattr(array, "__dlpack_device__"):
        device_type, device_id = array.__dlpack_device__()
        if device_type == _DL_CPU:
            return _from_numpy(np.from_dlpack(array), name, function, dtypes, writable)
        if device_type in (_DL_CUDA, _DL_CUDA_MANAGED):
            return _from_dlpack_cuda(array, device_id, name, function, dtypes, writable)
        raise _core.argument_error(function, f"{name}: a DLPack tensor on device type "
                                   f"{device_type}; spart reads host (1) or CUDA (2) memory",
                                   "type")
    if writable:
        raise _core.argument_error(function, f"{name}: a {type(array).__name__}; give an array "
                                   "spart can write into (NumPy, CuPy, PyTorch, DLPack)", "type")
    try:
        converted = np.asarray(array, dtype=dtypes[0])
    except (TypeError, ValueError) as problem:
        raise _core.argument_error(function, f"{name}: not an array of numbers ({problem})",
                                   "type") from None
    return _from_numpy(np.ascontiguousarray(converted), name, function, dtypes, False)


def same_place(operands: Sequence[Tuple[str, Operand]], function: str) -> Optional[int]:
    """The CUDA device all the operands are on, or None if all are in host
    memory; a SpartValueError naming the first that is elsewhere."""
    first_name, first = operands[0]
    for name, other in operands[1:]:
        if other.device != first.device:
            where = lambda o: "host memory" if o.device is None else f"CUDA device {o.device}"
            raise _core.argument_error(function, f"{name}: in {where(other)}, but {first_name} "
                                       f"is in {where(first)}; give all arrays in one place")
    return first.device


def empty_like(like: Any, operand_like: Operand, shape, dtype, function: str = "spart") -> Any:
    """A new array of `shape` and `dtype` in the same place and library as `like`
    (NumPy, CuPy or PyTorch); `function` names the call in the error."""
    if operand_like.device is None:
        return np.empty(shape, dtype=dtype)
    module = type(like).__module__.split(".")[0]
    if module == "cupy":
        import cupy

        with cupy.cuda.Device(operand_like.device):
            return cupy.empty(shape, dtype=dtype)
    if module == "torch":
        import torch

        return torch.empty(shape, dtype=getattr(torch, np.dtype(dtype).name),
                           device=like.device)
    raise _core.argument_error(function, f"a {type(like).__name__} in GPU memory: give the "
                               "output array yourself (out=) for arrays that are not CuPy or "
                               "PyTorch", "type")


def enter_device(ctx, device: Optional[int], stream: Optional[int]) -> None:
    """Point the context at `device` and the producer's `stream` (None or 1,
    the legacy default stream: spart's default) for a device call."""
    if device is None:
        return
    ctx.check(_core.lib.spart_context_set_cuda_device(ctx.pointer, int(device)),
              "spart_context_set_cuda_device")
    handle = ffi.NULL if stream in (None, 1) else ffi.cast("void *", stream)
    ctx.check(_core.lib.spart_context_set_cuda_stream(ctx.pointer, handle),
              "spart_context_set_cuda_stream")
