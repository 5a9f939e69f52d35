/* tessera_jit._native: the call path of the Python package, in C (CPython's stable ABI, 3.9+).
 *
 * A CallPlan is made once per entry function; calling it turns each Python argument into a
 * tessera_jit_arg_t — a tensor through the object's own __dlpack__ (a DLPack 1.0 versioned
 * capsule where the producer offers one, else a 0.x capsule), zero-copy; an int or a float as
 * a scalar — and calls tessera_jit_function_invoke with the GIL released. Nothing is rebuilt
 * per call but the argument array on the stack. Objects without a usable __dlpack__ (read-only
 * NumPy 1.x arrays, ml_dtypes' bfloat16; from a source tree, NumPy before 1.22) go through a
 * Python fallback
 * that describes their memory (tessera_jit/_dlpack.py).
 *
 * export_capsule() is the producer side: the DLPack capsule of memory a Python object owns
 * (the package's DeviceArray), which NumPy, PyTorch, CuPy or JAX can take with from_dlpack.
 *
 * The library's functions arrive as addresses from ctypes (configure()), so this module does
 * not link against libtessera_jit.so and follows whichever copy the package loaded. */
#define Py_LIMITED_API 0x03090000
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlpack/dlpack.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <structmember.h>

#include "tessera_jit.h"

/* The buffer protocol joined the stable ABI's headers in 3.11, but its struct and functions are
 * the same in every CPython 3 (that is why they could join): declared here for 3.9 and 3.10. */
#if Py_LIMITED_API + 0 < 0x030B0000
typedef struct {
  void* buf;
  PyObject* obj;
  Py_ssize_t len;
  Py_ssize_t itemsize;
  int readonly;
  int ndim;
  char* format;
  Py_ssize_t* shape;
  Py_ssize_t* strides;
  Py_ssize_t* suboffsets;
  void* internal;
} Py_buffer;
PyAPI_FUNC(int) PyObject_GetBuffer(PyObject* obj, Py_buffer* view, int flags);
PyAPI_FUNC(void) PyBuffer_Release(Py_buffer* view);
#define PyBUF_FORMAT 0x0004
#define PyBUF_ND 0x0008
#define PyBUF_STRIDES (0x0010 | PyBUF_ND)
#define PyBUF_RECORDS_RO (PyBUF_STRIDES | PyBUF_FORMAT)
#endif

/* DLPack 1.0 (dlpack.h ≥ 1.0; the system header may be 0.x): the versioned managed tensor. */
typedef struct {
  uint32_t major;
  uint32_t minor;
} TjDLPackVersion;

typedef struct TjManagedTensorVersioned {
  TjDLPackVersion version;
  void* manager_ctx;
  void (*deleter)(struct TjManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
} TjManagedTensorVersioned;

#define TJ_DLPACK_FLAG_READ_ONLY (UINT64_C(1) << 0)
/* Py_XSETREF is not in the stable ABI's headers before 3.12. */
#define TJ_XSETREF(target, value)         \
  do {                                    \
    PyObject* old_ = (PyObject*)(target); \
    (target) = (value);                   \
    Py_XDECREF(old_);                     \
  } while (0)

#define TJ_MAX_RANK 32 /* of a tensor described by the Python fallback */
#define TJ_INLINE_ARGS 16

typedef tessera_jit_error_t* (*InvokeFn)(tessera_jit_function_t*, const tessera_jit_arg_t*, size_t,
                                         void*, tessera_jit_arg_t*);
typedef tessera_jit_error_code_t (*ErrorCodeFn)(const tessera_jit_error_t*);
typedef const char* (*ErrorMessageFn)(const tessera_jit_error_t*, size_t*);
typedef void (*ErrorDestroyFn)(tessera_jit_error_t*);

/* Set once by configure(); the module is not usable before. */
static InvokeFn g_invoke;
static ErrorCodeFn g_error_code;
static ErrorMessageFn g_error_message;
static ErrorDestroyFn g_error_destroy;
static PyObject* g_make_error; /* (code: int, message: str) -> exception instance */
static PyObject* g_fallback;   /* (index, obj) -> (owner, data, shape, strides, code, bits, ro) */
static PyObject* g_stream_handle;   /* (obj) -> int: a stream object's CUstream */
static PyObject* g_cpu_types;       /* tuple of types known to live on the CPU (numpy.ndarray) */
static PyObject* g_scalar_types;    /* tuple of array-like types that are scalars (numpy.generic) */
static PyObject* g_complex_types;   /* tuple of complex scalar types (numpy.complexfloating) */
static PyObject* g_versioned_types; /* dict type -> bool: whether __dlpack__ takes max_version */
static PyObject* g_str_dlpack;
static PyObject* g_str_dlpack_device;
static PyObject* g_kwargs_versioned; /* {"max_version": (1, 0)} */
static PyObject* g_empty_tuple;

/* ------------------------------------------------------------------------------------------ */
/* One tensor argument while a call lasts. */

typedef struct {
  PyObject* capsule; /* owned: consumed (renamed "used_…"), released after the call */
  void* managed;     /* the capsule's managed tensor: its deleter is ours to call after the call */
  int versioned;     /* `managed` is a TjManagedTensorVersioned, else a DLManagedTensor */
  PyObject* owner;   /* owned: the fallback's keep-alive */
  int has_buffer;    /* `buffer` is held (the NumPy fast path) */
  Py_buffer buffer;
  DLTensor tensor; /* the fast path's or the fallback's description */
  int64_t shape[TJ_MAX_RANK];
  int64_t strides[TJ_MAX_RANK];
} TensorSlot;

static void ReleaseSlot(TensorSlot* slot) {
  if (slot->has_buffer) PyBuffer_Release(&slot->buffer);
  slot->has_buffer = 0;
  if (slot->managed != NULL) {
    /* As the DLPack protocol asks of a consumer: it renamed the capsule, so the deleter is its
     * to call (with the GIL held, which the producers' deleters may need). */
    if (slot->versioned) {
      TjManagedTensorVersioned* managed = (TjManagedTensorVersioned*)slot->managed;
      if (managed->deleter != NULL) managed->deleter(managed);
    } else {
      DLManagedTensor* managed = (DLManagedTensor*)slot->managed;
      if (managed->deleter != NULL) managed->deleter(managed);
    }
    slot->managed = NULL;
  }
  Py_XDECREF(slot->capsule);
  Py_XDECREF(slot->owner);
  slot->capsule = NULL;
  slot->owner = NULL;
}

/* 1 when `value` is of a type known to live on the CPU, 0 when not, -1 with an exception. */
static int IsCpuObject(PyObject* value) { return PyObject_IsInstance(value, g_cpu_types); }

/* The DLPack dtype of a buffer format ("f", "<d", "?", …); 0 when DLPack has none. */
static int FormatDtype(const char* format, Py_ssize_t itemsize, DLDataType* dtype) {
  if (format == NULL) return 0;
  if (*format == '@' || *format == '=' || *format == '<') ++format; /* x86-64: little endian */
  if (format[0] == '\0' || format[1] != '\0') return 0;
  switch (format[0]) {
    case 'e':
    case 'f':
    case 'd':
      dtype->code = kDLFloat;
      break;
    case 'b':
    case 'h':
    case 'i':
    case 'l':
    case 'q':
    case 'n':
      dtype->code = kDLInt;
      break;
    case 'B':
    case 'H':
    case 'I':
    case 'L':
    case 'Q':
    case 'N':
      dtype->code = kDLUInt;
      break;
    case '?':
      dtype->code = 6;
      break; /* kDLBool (DLPack 1.0): serves i1 only */
    default:
      return 0;
  }
  dtype->bits = (uint8_t)(itemsize * 8);
  dtype->lanes = 1;
  return itemsize > 0 && itemsize <= 8;
}

/* The NumPy fast path: an exact array type of the CPU (configure's cpu_types) described by its
 * buffer. 1 when `arg` is filled, 0 to take the DLPack path instead (no exception). */
static int BufferArgument(PyObject* value, TensorSlot* slot, tessera_jit_arg_t* arg) {
  const Py_ssize_t types = PyTuple_Size(g_cpu_types);
  int known = 0;
  for (Py_ssize_t t = 0; t < types && !known; ++t) {
    known = (PyObject*)Py_TYPE(value) == PyTuple_GetItem(g_cpu_types, t);
  }
  if (!known) return 0;
  if (PyObject_GetBuffer(value, &slot->buffer, PyBUF_RECORDS_RO) < 0) {
    PyErr_Clear(); /* e.g. a dtype the buffer protocol cannot carry (ml_dtypes' bfloat16) */
    return 0;
  }
  slot->has_buffer = 1;
  Py_buffer* view = &slot->buffer;
  DLTensor* tensor = &slot->tensor;
  memset(tensor, 0, sizeof(*tensor));
  if (view->ndim > TJ_MAX_RANK || !FormatDtype(view->format, view->itemsize, &tensor->dtype)) {
    PyBuffer_Release(view);
    slot->has_buffer = 0;
    return 0;
  }
  tensor->data = view->buf;
  tensor->device.device_type = kDLCPU;
  tensor->ndim = view->ndim;
  int contiguous = 1;
  Py_ssize_t expected = view->itemsize;
  for (int d = view->ndim - 1; d >= 0; --d) {
    slot->shape[d] = view->shape[d];
    const Py_ssize_t stride = view->strides != NULL ? view->strides[d] : expected;
    if (view->shape[d] > 1 && stride != expected) contiguous = 0;
    slot->strides[d] = stride / view->itemsize;
    if (stride % view->itemsize != 0) slot->strides[d] = INT64_MIN; /* never dense */
    expected *= view->shape[d];
  }
  tensor->shape = slot->shape;
  tensor->strides = contiguous ? NULL : slot->strides;
  arg->kind = view->readonly ? TESSERA_JIT_ARG_TENSOR_READ_ONLY : TESSERA_JIT_ARG_TENSOR;
  arg->value.tensor = tensor;
  return 1;
}

/* The DLPack device type of `value` (kDLCPU when it cannot say), or -1 with an exception. */
static int DeviceType(PyObject* value) {
  const int cpu_known = IsCpuObject(value);
  if (cpu_known < 0) return -1;
  if (cpu_known) return kDLCPU;
  PyObject* method = PyObject_GetAttr(value, g_str_dlpack_device);
  if (method == NULL) {
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return -1;
    PyErr_Clear(); /* a producer without __dlpack_device__: host memory */
    return kDLCPU;
  }
  PyObject* device = PyObject_CallObject(method, NULL);
  Py_DECREF(method);
  if (device == NULL) return -1;
  long type = -1;
  if (PyTuple_Check(device) && PyTuple_Size(device) == 2) {
    type = PyLong_AsLong(PyTuple_GetItem(device, 0));
  }
  Py_DECREF(device);
  if (PyErr_Occurred()) return -1;
  if (type < 0 || type > 0x7FFF) {
    PyErr_SetString(PyExc_TypeError, "__dlpack_device__() did not return (device_type, id)");
    return -1;
  }
  return (int)type;
}

/* Remembers whether `type`'s __dlpack__ takes max_version. The cache holds its types: it is
 * emptied when it reaches 256 of them, so types made at run time are not kept forever. */
static void RememberVersioned(PyObject* type, PyObject* versioned) {
  if (PyDict_Size(g_versioned_types) >= 256) PyDict_Clear(g_versioned_types);
  if (PyDict_SetItem(g_versioned_types, type, versioned) < 0) PyErr_Clear();
}

/* Calls value.__dlpack__(…): with max_version=(1, 0) unless its type is known not to take it,
 * and stream= for device memory. A new capsule, or NULL with an exception. */
static PyObject* CallDlpack(PyObject* value, PyObject* method, int device_type,
                            PyObject* stream_arg) {
  PyObject* type = (PyObject*)Py_TYPE(value);
  PyObject* known = PyDict_GetItem(g_versioned_types, type); /* borrowed */
  const int versioned = known == NULL || known == Py_True;
  PyObject* kwargs = NULL;
  if (device_type != kDLCPU) {
    kwargs = versioned ? PyDict_Copy(g_kwargs_versioned) : PyDict_New();
    if (kwargs == NULL || PyDict_SetItemString(kwargs, "stream", stream_arg) < 0) {
      Py_XDECREF(kwargs);
      return NULL;
    }
  } else if (versioned) {
    kwargs = g_kwargs_versioned;
    Py_INCREF(kwargs);
  }
  PyObject* capsule = PyObject_Call(method, g_empty_tuple, kwargs);
  if (capsule == NULL && versioned && known == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
    /* A producer from before DLPack 1.0: no max_version keyword. Remembered per type. */
    PyErr_Clear();
    if (kwargs == g_kwargs_versioned) {
      Py_DECREF(kwargs); /* shared: never modified */
      kwargs = NULL;
    } else if (kwargs != NULL && PyDict_DelItemString(kwargs, "max_version") < 0) {
      Py_DECREF(kwargs);
      return NULL;
    }
    capsule = PyObject_Call(method, g_empty_tuple, kwargs);
    if (capsule != NULL) RememberVersioned(type, Py_False);
  } else if (capsule != NULL && known == NULL && versioned) {
    RememberVersioned(type, Py_True);
  }
  Py_XDECREF(kwargs);
  return capsule;
}

/* Fills `arg` for tensor argument `index` from `value` (`method`: its bound __dlpack__, or
 * NULL). 0, or -1 with an exception. */
static int TensorArgument(Py_ssize_t index, PyObject* value, PyObject* method, PyObject* stream_arg,
                          TensorSlot* slot, tessera_jit_arg_t* arg) {
  PyObject* capsule = NULL;
  PyObject *saved_type = NULL, *saved_value = NULL, *saved_traceback = NULL;
  if (method != NULL) {
    const int device_type = DeviceType(value);
    if (device_type < 0) return -1;
    capsule = CallDlpack(value, method, device_type, stream_arg);
    if (capsule == NULL) {
      /* BufferError / TypeError: a dtype or flag DLPack cannot carry here; ask the fallback,
       * and keep this error as the cause of the fallback's, if it fails too. */
      if (!PyErr_ExceptionMatches(PyExc_BufferError) && !PyErr_ExceptionMatches(PyExc_TypeError)) {
        return -1;
      }
      PyErr_Fetch(&saved_type, &saved_value, &saved_traceback);
      PyErr_NormalizeException(&saved_type, &saved_value, &saved_traceback);
    }
  }
  if (capsule != NULL) {
    slot->capsule = capsule;
    const int versioned = PyCapsule_IsValid(capsule, "dltensor_versioned");
    if (!versioned && !PyCapsule_IsValid(capsule, "dltensor")) {
      PyErr_Format(PyExc_TypeError,
                   "argument #%zd: __dlpack__() returned something other than an unused DLPack "
                   "capsule",
                   index);
      return -1;
    }
    void* managed = PyCapsule_GetPointer(capsule, versioned ? "dltensor_versioned" : "dltensor");
    if (managed == NULL) return -1;
    if (versioned && ((TjManagedTensorVersioned*)managed)->version.major != 1) {
      PyErr_Format(PyExc_BufferError,
                   "argument #%zd: DLPack %u.%u tensors are not supported (1.x is)", index,
                   (unsigned)((TjManagedTensorVersioned*)managed)->version.major,
                   (unsigned)((TjManagedTensorVersioned*)managed)->version.minor);
      return -1; /* not consumed: the capsule's destructor frees it */
    }
    /* Consumed: no other consumer may take it now; its deleter is called after the call. */
    if (PyCapsule_SetName(capsule, versioned ? "used_dltensor_versioned" : "used_dltensor") < 0) {
      return -1;
    }
    slot->managed = managed;
    slot->versioned = versioned;
    if (versioned) {
      TjManagedTensorVersioned* tensor = (TjManagedTensorVersioned*)managed;
      arg->kind = (tensor->flags & TJ_DLPACK_FLAG_READ_ONLY) ? TESSERA_JIT_ARG_TENSOR_READ_ONLY
                                                             : TESSERA_JIT_ARG_TENSOR;
      arg->value.tensor = &tensor->dl_tensor;
    } else {
      /* DLPack 0.x says nothing of read-only memory (NumPy 1.x refuses to export it). */
      arg->kind = TESSERA_JIT_ARG_TENSOR;
      arg->value.tensor = &((DLManagedTensor*)managed)->dl_tensor;
    }
    return 0;
  }
  /* The fallback: (owner, data, shape, strides or None, code, bits, read_only). */
  PyObject* index_object = PyLong_FromSsize_t(index);
  PyObject* described = index_object != NULL
                            ? PyObject_CallFunctionObjArgs(g_fallback, index_object, value, NULL)
                            : NULL;
  Py_XDECREF(index_object);
  if (described == NULL) {
    if (saved_value != NULL) {
      PyObject *type, *error, *traceback;
      PyErr_Fetch(&type, &error, &traceback);
      PyErr_NormalizeException(&type, &error, &traceback);
      if (error != NULL) {
        if (saved_traceback != NULL) PyException_SetTraceback(saved_value, saved_traceback);
        PyException_SetCause(error, saved_value); /* steals saved_value */
        saved_value = NULL;
      }
      PyErr_Restore(type, error, traceback);
    }
    Py_XDECREF(saved_type);
    Py_XDECREF(saved_value);
    Py_XDECREF(saved_traceback);
    return -1;
  }
  Py_XDECREF(saved_type);
  Py_XDECREF(saved_value);
  Py_XDECREF(saved_traceback);
  if (!PyTuple_Check(described) || PyTuple_Size(described) != 7) {
    Py_DECREF(described);
    PyErr_SetString(PyExc_SystemError, "the array fallback returned a malformed description");
    return -1;
  }
  slot->owner = PyTuple_GetItem(described, 0);
  Py_INCREF(slot->owner);
  PyObject* shape = PyTuple_GetItem(described, 2);
  PyObject* strides = PyTuple_GetItem(described, 3);
  const Py_ssize_t rank = PyTuple_Check(shape) ? PyTuple_Size(shape) : -1;
  if (rank < 0 || rank > TJ_MAX_RANK ||
      (strides != Py_None && (!PyTuple_Check(strides) || PyTuple_Size(strides) != rank))) {
    Py_DECREF(described);
    PyErr_Format(PyExc_ValueError, "argument #%zd: rank must be 0 to %d", index, TJ_MAX_RANK);
    return -1;
  }
  DLTensor* tensor = &slot->tensor;
  memset(tensor, 0, sizeof(*tensor));
  tensor->data = PyLong_AsVoidPtr(PyTuple_GetItem(described, 1));
  tensor->device.device_type = kDLCPU;
  tensor->ndim = (int32_t)rank;
  for (Py_ssize_t d = 0; d < rank; ++d) {
    slot->shape[d] = PyLong_AsLongLong(PyTuple_GetItem(shape, d));
    if (strides != Py_None) slot->strides[d] = PyLong_AsLongLong(PyTuple_GetItem(strides, d));
  }
  tensor->shape = slot->shape;
  tensor->strides = strides != Py_None ? slot->strides : NULL;
  tensor->dtype.code = (uint8_t)PyLong_AsLong(PyTuple_GetItem(described, 4));
  tensor->dtype.bits = (uint8_t)PyLong_AsLong(PyTuple_GetItem(described, 5));
  tensor->dtype.lanes = 1;
  const int read_only = PyObject_IsTrue(PyTuple_GetItem(described, 6));
  Py_DECREF(described);
  if (PyErr_Occurred()) {
    PyErr_Clear();
    PyErr_Format(PyExc_OverflowError,
                 "argument #%zd: the array's address, sizes or strides do not fit in 64 bits",
                 index);
    return -1;
  }
  arg->kind = read_only ? TESSERA_JIT_ARG_TENSOR_READ_ONLY : TESSERA_JIT_ARG_TENSOR;
  arg->value.tensor = tensor;
  return 0;
}

/* Fills `arg` for a scalar argument: an integer (Python int, NumPy integer: __index__) or a
 * real number (__float__), never a string or a complex number. 0, or -1 with an exception. */
static int ScalarArgument(Py_ssize_t index, PyObject* value, int expected, tessera_jit_arg_t* arg) {
  const int is_complex = PyComplex_Check(value) ? 1 : PyObject_IsInstance(value, g_complex_types);
  if (is_complex < 0) return -1;
  if (is_complex) {
    PyErr_Format(PyExc_TypeError, "argument #%zd: a complex number is not a Tessera scalar", index);
    return -1;
  }
  if (PyIndex_Check(value) && expected != TESSERA_JIT_ARG_FLOAT) {
    PyObject* integer = PyNumber_Index(value);
    if (integer != NULL) {
      arg->kind = TESSERA_JIT_ARG_INT;
      arg->value.i = PyLong_AsLongLong(integer);
      Py_DECREF(integer);
      if (arg->value.i == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_Format(PyExc_OverflowError, "argument #%zd: %R does not fit in 64 bits", index,
                     value);
        return -1;
      }
      return 0;
    }
    PyErr_Clear(); /* e.g. numpy.bool_, which refuses __index__: try it as a number */
  }
  const double real = PyFloat_AsDouble(value); /* __float__ or __index__: no string parsing */
  if (real == -1.0 && PyErr_Occurred()) {
    const int overflow = PyErr_ExceptionMatches(PyExc_OverflowError);
    PyErr_Clear();
    PyObject* type_name = PyObject_GetAttrString((PyObject*)Py_TYPE(value), "__name__");
    if (overflow) {
      PyErr_Format(PyExc_OverflowError, "argument #%zd: %R is out of a double's range", index,
                   value);
    } else {
      PyErr_Format(PyExc_TypeError,
                   "argument #%zd: expected an array (an object with __dlpack__), an int or a "
                   "float, found %S",
                   index, type_name != NULL ? type_name : Py_None);
    }
    Py_XDECREF(type_name);
    return -1;
  }
  arg->kind = TESSERA_JIT_ARG_FLOAT;
  arg->value.f = real;
  return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* CallPlan */

typedef struct {
  PyObject_HEAD tessera_jit_function_t* function; /* NULL once invalidated (its module closed) */
  Py_ssize_t in_flight; /* calls inside the library now (changed under the GIL) */
  Py_ssize_t num_args;
  int result_kind; /* -1: no result; TESSERA_JIT_ARG_INT or TESSERA_JIT_ARG_FLOAT */
  PyObject* kinds; /* bytes: each argument's expected tessera_jit_arg_kind_t */
  PyObject* keep;  /* what keeps the function valid (the Python module object) */
  PyObject* dict;  /* attributes of subclasses (tessera_jit.Function) */
} CallPlan;

static int CallPlan_init(PyObject* self_object, PyObject* args, PyObject* kwargs) {
  CallPlan* self = (CallPlan*)self_object;
  unsigned long long handle = 0;
  Py_ssize_t num_args = 0;
  int result_kind = -1;
  PyObject* kinds = NULL;
  PyObject* keep = Py_None;
  static char* keywords[] = {"handle", "num_args", "result_kind", "kinds", "keep", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "KniO!|O", keywords, &handle, &num_args,
                                   &result_kind, &PyBytes_Type, &kinds, &keep)) {
    return -1;
  }
  if (handle == 0 || num_args < 0 || PyBytes_Size(kinds) != num_args) {
    PyErr_SetString(PyExc_ValueError,
                    "a call plan needs a function handle and each argument's kind");
    return -1;
  }
  Py_INCREF(kinds);
  TJ_XSETREF(self->kinds, kinds);
  self->function = (tessera_jit_function_t*)(uintptr_t)handle;
  self->num_args = num_args;
  self->result_kind = result_kind;
  Py_INCREF(keep);
  TJ_XSETREF(self->keep, keep);
  return 0;
}

static int CallPlan_traverse(PyObject* self_object, visitproc visit, void* arg) {
  CallPlan* self = (CallPlan*)self_object;
  Py_VISIT(self->keep);
  Py_VISIT(self->dict);
  Py_VISIT(self->kinds);
#if PY_VERSION_HEX >= 0x03090000
  Py_VISIT(Py_TYPE(self_object));
#endif
  return 0;
}

static int CallPlan_clear(PyObject* self_object) {
  CallPlan* self = (CallPlan*)self_object;
  Py_CLEAR(self->keep);
  Py_CLEAR(self->dict);
  Py_CLEAR(self->kinds);
  return 0;
}

static void CallPlan_dealloc(PyObject* self_object) {
  PyTypeObject* type = Py_TYPE(self_object);
  PyObject_GC_UnTrack(self_object);
  CallPlan_clear(self_object);
  freefunc free_function = (freefunc)PyType_GetSlot(type, Py_tp_free);
  free_function(self_object);
  Py_DECREF(type);
}

/* Raises the exception tessera_jit.errors makes for `error` (and releases it). */
static PyObject* RaiseError(tessera_jit_error_t* error) {
  size_t size = 0;
  const char* text = g_error_message(error, &size);
  PyObject* message = PyUnicode_DecodeUTF8(text, (Py_ssize_t)size, "replace");
  const int code = (int)g_error_code(error);
  g_error_destroy(error);
  if (message == NULL) return NULL;
  PyObject* exception = PyObject_CallFunction(g_make_error, "iO", code, message);
  Py_DECREF(message);
  if (exception == NULL) return NULL;
  PyErr_SetObject((PyObject*)Py_TYPE(exception), exception);
  Py_DECREF(exception);
  return NULL;
}

/* The CUstream of a `stream=` keyword (None: NULL, the legacy default stream), the value
 * producers' __dlpack__(stream=…) receives for it (1 is the legacy default stream), and what
 * keeps the stream valid until the call is done (*out_keep, owned; may be NULL). */
static int StreamArgument(PyObject* stream, void** out_stream, PyObject** out_dlpack_stream,
                          PyObject** out_keep) {
  *out_keep = NULL;
  if (stream == NULL || stream == Py_None) {
    *out_stream = NULL;
    *out_dlpack_stream = PyLong_FromLong(1);
    return *out_dlpack_stream != NULL ? 0 : -1;
  }
  PyObject* handle = NULL;
  if (PyLong_Check(stream) && !PyBool_Check(stream)) {
    Py_INCREF(stream);
    handle = stream;
  } else {
    /* (CUstream, keep-alive) from tessera_jit._dlpack.stream_handle. */
    PyObject* pair = PyObject_CallFunctionObjArgs(g_stream_handle, stream, NULL);
    if (pair == NULL) return -1;
    if (!PyTuple_Check(pair) || PyTuple_Size(pair) != 2) {
      Py_DECREF(pair);
      PyErr_SetString(PyExc_SystemError, "stream_handle() did not return (handle, keep)");
      return -1;
    }
    handle = PyTuple_GetItem(pair, 0);
    Py_INCREF(handle);
    *out_keep = pair; /* holds the keep-alive */
  }
  if (!PyLong_Check(handle) || PyLong_AsLongLong(handle) < 0) {
    Py_DECREF(handle);
    if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_OverflowError)) {
      PyErr_Clear();
      PyErr_SetString(PyExc_ValueError, "stream: a CUstream is a non-negative address");
    }
    return -1;
  }
  *out_stream = PyLong_AsVoidPtr(handle);
  if (PyErr_Occurred()) {
    Py_DECREF(handle);
    return -1;
  }
  /* DLPack reserves 0 (ambiguous) and uses 1 for the legacy default stream. */
  if (*out_stream == NULL) {
    Py_DECREF(handle);
    handle = PyLong_FromLong(1);
    if (handle == NULL) return -1;
  }
  *out_dlpack_stream = handle;
  return 0;
}

static PyObject* CallPlan_call(PyObject* self_object, PyObject* args, PyObject* kwargs) {
  CallPlan* self = (CallPlan*)self_object;
  if (g_invoke == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "tessera_jit._native is not configured");
    return NULL;
  }
  if (self->function == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "the module of this function was closed");
    return NULL;
  }
  PyObject* stream = NULL;
  if (kwargs != NULL && PyDict_Size(kwargs) > 0) {
    stream = PyDict_GetItemString(kwargs, "stream"); /* borrowed */
    if (PyDict_Size(kwargs) != (stream != NULL ? 1 : 0)) {
      PyErr_SetString(PyExc_TypeError, "the only keyword argument of a call is stream=");
      return NULL;
    }
  }
  const Py_ssize_t n = PyTuple_Size(args);
  tessera_jit_arg_t inline_args[TJ_INLINE_ARGS];
  TensorSlot* inline_slots[TJ_INLINE_ARGS];
  tessera_jit_arg_t* values = inline_args;
  TensorSlot** slots = inline_slots;
  if (n > TJ_INLINE_ARGS) {
    values = (tessera_jit_arg_t*)PyMem_Calloc((size_t)n, sizeof(tessera_jit_arg_t));
    slots = (TensorSlot**)PyMem_Calloc((size_t)n, sizeof(TensorSlot*));
    if (values == NULL || slots == NULL) {
      PyMem_Free(values);
      PyMem_Free(slots);
      return PyErr_NoMemory();
    }
  } else {
    memset(inline_slots, 0, sizeof(inline_slots));
  }
  /* The tensor slots of up to TJ_INLINE_ARGS arguments live on the stack (~11 KB). */
  TensorSlot capsule_slots[TJ_INLINE_ARGS];
  PyObject* result = NULL;
  void* cu_stream = NULL;
  PyObject* dlpack_stream = NULL;
  PyObject* stream_keep = NULL;
  if (StreamArgument(stream, &cu_stream, &dlpack_stream, &stream_keep) < 0) goto done;
  const char* kinds = PyBytes_AsString(self->kinds);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* value = PyTuple_GetItem(args, i);
    const int expected = i < self->num_args ? kinds[i] : -1;
    if (PyLong_Check(value) && expected == TESSERA_JIT_ARG_FLOAT) { /* 2 for a float: 2.0 */
      values[i].kind = TESSERA_JIT_ARG_FLOAT;
      values[i].value.f = PyLong_AsDouble(value);
      if (values[i].value.f == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_Format(PyExc_OverflowError, "argument #%zd: %R is out of a double's range", i, value);
        goto done;
      }
      continue;
    }
    if (PyLong_Check(value)) { /* bool is an int */
      values[i].kind = TESSERA_JIT_ARG_INT;
      values[i].value.i = PyLong_AsLongLong(value);
      if (values[i].value.i == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_Format(PyExc_OverflowError, "argument #%zd: %R does not fit in 64 bits", i, value);
        goto done;
      }
      continue;
    }
    if (PyFloat_Check(value)) {
      values[i].kind = TESSERA_JIT_ARG_FLOAT;
      values[i].value.f = PyFloat_AsDouble(value);
      continue;
    }
    TensorSlot* slot;
    if (n <= TJ_INLINE_ARGS) {
      slot = &capsule_slots[i];
      slot->capsule = slot->owner = NULL;
      slot->managed = NULL;
      slot->has_buffer = 0;
    } else {
      slot = (TensorSlot*)PyMem_Calloc(1, sizeof(TensorSlot));
      if (slot == NULL) {
        PyErr_NoMemory();
        goto done;
      }
    }
    slots[i] = slot;
    if (BufferArgument(value, slot, &values[i])) continue;
    const int scalar_like = PyObject_IsInstance(value, g_scalar_types);
    if (scalar_like < 0) goto done;
    PyObject* method = NULL;
    if (!scalar_like) {
      method = PyObject_GetAttr(value, g_str_dlpack);
      if (method == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError)) goto done; /* its own error */
        PyErr_Clear();
      }
    }
    if (method == NULL && (scalar_like || !PyObject_HasAttrString(value, "__array_interface__"))) {
      if (ScalarArgument(i, value, expected, &values[i]) < 0) goto done;
      continue;
    }
    const int failed = TensorArgument(i, value, method, dlpack_stream, slot, &values[i]);
    Py_XDECREF(method);
    if (failed < 0) goto done;
  }
  {
    tessera_jit_arg_t out_result;
    memset(&out_result, 0, sizeof(out_result));
    tessera_jit_error_t* error;
    /* Checked again here, with nothing between the check and the count that could let a
     * closing thread in (a producer's __dlpack__ above may have released the GIL). */
    tessera_jit_function_t* function = self->function;
    if (function == NULL) {
      PyErr_SetString(PyExc_RuntimeError, "the module of this function was closed");
      goto done;
    }
    ++self->in_flight;
    Py_BEGIN_ALLOW_THREADS error = g_invoke(function, values, (size_t)n, cu_stream, &out_result);
    Py_END_ALLOW_THREADS-- self->in_flight;
    if (error != NULL) {
      RaiseError(error);
      goto done;
    }
    if (self->result_kind == TESSERA_JIT_ARG_FLOAT) {
      result = PyFloat_FromDouble(out_result.value.f);
    } else if (self->result_kind == TESSERA_JIT_ARG_INT) {
      result = PyLong_FromLongLong(out_result.value.i);
    } else {
      Py_INCREF(Py_None);
      result = Py_None;
    }
  }
done:
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (slots[i] == NULL) continue;
    ReleaseSlot(slots[i]);
    if (n > TJ_INLINE_ARGS) PyMem_Free(slots[i]);
  }
  if (n > TJ_INLINE_ARGS) {
    PyMem_Free(values);
    PyMem_Free(slots);
  }
  Py_XDECREF(dlpack_stream);
  Py_XDECREF(stream_keep);
  return result;
}

static PyObject* CallPlan_invalidate(PyObject* self_object, PyObject* unused) {
  ((CallPlan*)self_object)->function = NULL;
  Py_RETURN_NONE;
}

static PyObject* CallPlan_in_flight(PyObject* self_object, PyObject* unused) {
  return PyLong_FromSsize_t(((CallPlan*)self_object)->in_flight);
}

static PyMethodDef CallPlan_methods[] = {
    {"_invalidate", CallPlan_invalidate, METH_NOARGS,
     "Makes later calls raise (the module is closing); calls in flight go on."},
    {"_in_flight", CallPlan_in_flight, METH_NOARGS, "How many calls are inside the library."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef CallPlan_members[] = {
    {"__dictoffset__", T_PYSSIZET, offsetof(CallPlan, dict), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot CallPlan_slots[] = {
    {Py_tp_doc,
     (void*)"CallPlan(handle, num_args, result_kind, kinds, keep): calls one entry function "
            "of a compiled module (tessera_jit.Function derives from it)."},
    {Py_tp_new, (void*)PyType_GenericNew},
    {Py_tp_init, (void*)CallPlan_init},
    {Py_tp_call, (void*)CallPlan_call},
    {Py_tp_dealloc, (void*)CallPlan_dealloc},
    {Py_tp_traverse, (void*)CallPlan_traverse},
    {Py_tp_clear, (void*)CallPlan_clear},
    {Py_tp_members, (void*)CallPlan_members},
    {Py_tp_methods, (void*)CallPlan_methods},
    {0, NULL},
};

static PyType_Spec CallPlan_spec = {
    "tessera_jit._native.CallPlan",
    sizeof(CallPlan),
    0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    CallPlan_slots,
};

/* ------------------------------------------------------------------------------------------ */
/* export_capsule: the producer side */

typedef struct {
  PyObject* owner;
  int64_t* shape;
} ExportContext;

static void ReleaseExport(void* context_pointer) {
  ExportContext* context = (ExportContext*)context_pointer;
  if (context == NULL) return;
  /* A consumer may call the deleter from any thread, with or without the GIL — or after the
   * interpreter ended (a tensor freed at exit), when the owner is left alone. */
  if (Py_IsInitialized()) {
    PyGILState_STATE state = PyGILState_Ensure();
    Py_XDECREF(context->owner);
    PyGILState_Release(state);
  }
  free(context->shape);
  free(context);
}

static void DeleteVersioned(TjManagedTensorVersioned* self) {
  ReleaseExport(self->manager_ctx);
  free(self);
}

static void DeleteUnversioned(DLManagedTensor* self) {
  ReleaseExport(self->manager_ctx);
  free(self);
}

/* A capsule nobody consumed frees its tensor; a consumed one ("used_dltensor…") is the
 * consumer's to free. */
static void VersionedCapsuleDestructor(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, "dltensor_versioned")) return;
  TjManagedTensorVersioned* managed =
      (TjManagedTensorVersioned*)PyCapsule_GetPointer(capsule, "dltensor_versioned");
  if (managed != NULL && managed->deleter != NULL) managed->deleter(managed);
}

static void UnversionedCapsuleDestructor(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, "dltensor")) return;
  DLManagedTensor* managed = (DLManagedTensor*)PyCapsule_GetPointer(capsule, "dltensor");
  if (managed != NULL && managed->deleter != NULL) managed->deleter(managed);
}

static PyObject* ExportCapsule(PyObject* module, PyObject* args, PyObject* kwargs) {
  PyObject* owner;
  unsigned long long data;
  PyObject* shape;
  int code, bits, device_type, device_id, versioned, read_only;
  static char* keywords[] = {"owner",       "data",      "shape",     "code",      "bits",
                             "device_type", "device_id", "versioned", "read_only", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OKOiiiipp", keywords, &owner, &data, &shape,
                                   &code, &bits, &device_type, &device_id, &versioned,
                                   &read_only)) {
    return NULL;
  }
  if (!PyTuple_Check(shape)) {
    PyErr_SetString(PyExc_TypeError, "shape must be a tuple");
    return NULL;
  }
  const Py_ssize_t rank = PyTuple_Size(shape);
  ExportContext* context = (ExportContext*)calloc(1, sizeof(ExportContext));
  int64_t* sizes = (int64_t*)calloc((size_t)(rank > 0 ? rank : 1), sizeof(int64_t));
  if (context == NULL || sizes == NULL) {
    free(context);
    free(sizes);
    return PyErr_NoMemory();
  }
  for (Py_ssize_t d = 0; d < rank; ++d) {
    sizes[d] = PyLong_AsLongLong(PyTuple_GetItem(shape, d));
  }
  if (PyErr_Occurred()) {
    free(context);
    free(sizes);
    return NULL;
  }
  context->owner = owner;
  context->shape = sizes;
  DLTensor tensor;
  memset(&tensor, 0, sizeof(tensor));
  tensor.data = (void*)(uintptr_t)data;
  tensor.device.device_type = (DLDeviceType)device_type;
  tensor.device.device_id = device_id;
  tensor.ndim = (int32_t)rank;
  tensor.dtype.code = (uint8_t)code;
  tensor.dtype.bits = (uint8_t)bits;
  tensor.dtype.lanes = 1;
  tensor.shape = sizes;
  tensor.strides = NULL; /* dense row-major */
  PyObject* capsule = NULL;
  if (versioned) {
    TjManagedTensorVersioned* managed =
        (TjManagedTensorVersioned*)calloc(1, sizeof(TjManagedTensorVersioned));
    if (managed == NULL) goto no_memory;
    managed->version.major = 1;
    managed->version.minor = 0;
    managed->manager_ctx = context;
    managed->deleter = DeleteVersioned;
    managed->flags = read_only ? TJ_DLPACK_FLAG_READ_ONLY : 0;
    managed->dl_tensor = tensor;
    capsule = PyCapsule_New(managed, "dltensor_versioned", VersionedCapsuleDestructor);
    if (capsule == NULL) {
      free(managed);
      goto failed;
    }
  } else {
    DLManagedTensor* managed = (DLManagedTensor*)calloc(1, sizeof(DLManagedTensor));
    if (managed == NULL) goto no_memory;
    managed->manager_ctx = context;
    managed->deleter = DeleteUnversioned;
    managed->dl_tensor = tensor;
    capsule = PyCapsule_New(managed, "dltensor", UnversionedCapsuleDestructor);
    if (capsule == NULL) {
      free(managed);
      goto failed;
    }
  }
  Py_INCREF(owner); /* released by the deleter */
  return capsule;
no_memory:
  PyErr_NoMemory();
failed:
  free(sizes);
  free(context);
  return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* configure */

static PyObject* Configure(PyObject* module, PyObject* args, PyObject* kwargs) {
  unsigned long long invoke, error_code, error_message, error_destroy;
  PyObject *make_error, *fallback, *stream_handle, *cpu_types, *scalar_types, *complex_types;
  static char* keywords[] = {
      "invoke",        "error_code", "error_message", "error_destroy", "make_error", "fallback",
      "stream_handle", "cpu_types",  "scalar_types",  "complex_types", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "KKKKOOOOOO", keywords, &invoke, &error_code,
                                   &error_message, &error_destroy, &make_error, &fallback,
                                   &stream_handle, &cpu_types, &scalar_types, &complex_types)) {
    return NULL;
  }
  if (!invoke || !error_code || !error_message || !error_destroy || !PyTuple_Check(cpu_types) ||
      !PyTuple_Check(scalar_types) || !PyTuple_Check(complex_types)) {
    PyErr_SetString(PyExc_ValueError, "configure() needs the library's function addresses");
    return NULL;
  }
  g_invoke = (InvokeFn)(uintptr_t)invoke;
  g_error_code = (ErrorCodeFn)(uintptr_t)error_code;
  g_error_message = (ErrorMessageFn)(uintptr_t)error_message;
  g_error_destroy = (ErrorDestroyFn)(uintptr_t)error_destroy;
  Py_INCREF(make_error);
  TJ_XSETREF(g_make_error, make_error);
  Py_INCREF(fallback);
  TJ_XSETREF(g_fallback, fallback);
  Py_INCREF(stream_handle);
  TJ_XSETREF(g_stream_handle, stream_handle);
  Py_INCREF(cpu_types);
  TJ_XSETREF(g_cpu_types, cpu_types);
  Py_INCREF(scalar_types);
  TJ_XSETREF(g_scalar_types, scalar_types);
  Py_INCREF(complex_types);
  TJ_XSETREF(g_complex_types, complex_types);
  Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"configure", (PyCFunction)(void (*)(void))Configure, METH_VARARGS | METH_KEYWORDS,
     "configure(invoke, error_code, error_message, error_destroy, make_error, fallback, "
     "stream_handle, cpu_types, scalar_types, complex_types): the library's functions and the "
     "package's "
     "hooks."},
    {"export_capsule", (PyCFunction)(void (*)(void))ExportCapsule, METH_VARARGS | METH_KEYWORDS,
     "export_capsule(owner, data, shape, code, bits, device_type, device_id, versioned, "
     "read_only): a DLPack capsule of dense row-major memory that `owner` keeps alive."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef native_module = {
    PyModuleDef_HEAD_INIT,
    "_native",
    "The call path of tessera_jit (CPython stable ABI).",
    -1,
    module_methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__native(void) {
  PyObject* module = PyModule_Create(&native_module);
  if (module == NULL) return NULL;
  g_str_dlpack = PyUnicode_InternFromString("__dlpack__");
  g_str_dlpack_device = PyUnicode_InternFromString("__dlpack_device__");
  g_versioned_types = PyDict_New();
  g_empty_tuple = PyTuple_New(0);
  g_kwargs_versioned = PyDict_New();
  PyObject* version = Py_BuildValue("(ii)", 1, 0);
  if (g_str_dlpack == NULL || g_str_dlpack_device == NULL || g_versioned_types == NULL ||
      g_empty_tuple == NULL || g_kwargs_versioned == NULL || version == NULL ||
      PyDict_SetItemString(g_kwargs_versioned, "max_version", version) < 0) {
    Py_XDECREF(version);
    Py_DECREF(module);
    return NULL;
  }
  Py_DECREF(version);
  PyObject* plan_type = PyType_FromSpec(&CallPlan_spec);
  if (plan_type == NULL || PyModule_AddObject(module, "CallPlan", plan_type) < 0) {
    Py_XDECREF(plan_type);
    Py_DECREF(module);
    return NULL;
  }
  return module;
}
