"""What Python code run inside a call, and odd tensors, cannot do to the
extension (a review of its reference counts and lifetimes): shut the
library down or clear the family table while a call holds its kernel, leak
a negative-bit tensor's resolved copy, read a detached negative-bit tensor
unresolved, trust a producer's new_empty of another dtype, hand the kernels
unaligned memory, or write into a torch tensor behind autograd's back."""

import resource

import numpy as np
import pytest

import tensorjit
from tensorjit import _tensorjit as _tj


class _Calls:
    """An out= of a DLPack producer whose __dlpack__ runs `then` first:
    Python code run while the call holds its kernel."""

    def __init__(self, arr, then):
        self.arr, self.then = arr, then

    def __dlpack__(self, *args, **kwargs):
        self.then()
        return self.arr.__dlpack__()

    def __dlpack_device__(self):
        return (1, 0)


def _gather_case():
    data = np.arange(1 << 14, dtype=np.float32).reshape(-1, 16)
    idx = np.arange(2000) % data.shape[0]
    tensorjit.gather(data, idx)  # the family compiled
    return data, idx, np.empty((idx.size, 16), np.float32)


def test_shutdown_inside_a_call_is_refused():
    data, idx, out = _gather_case()
    with pytest.raises(tensorjit.Error, match=r"shutdown\(\) while 1 call\(s\) run"):
        tensorjit.gather(data, idx, out=_Calls(out, tensorjit.shutdown))
    np.testing.assert_array_equal(tensorjit.gather(data, idx), data[idx])
    tensorjit.shutdown()  # once no call runs: as ever


def test_the_family_table_cleared_inside_a_call():
    """A new family past the cap clears the table (and releases its
    kernels) while the call holds one of them: it runs to its end, then
    goes."""
    data, idx, out = _gather_case()

    def past_the_cap():
        _tj._set_max_families(1)
        tensorjit.gather(np.ones((4, 3), np.float64), np.array([0, 1]))

    try:
        assert tensorjit.gather(data, idx, out=_Calls(out, past_the_cap)) is not None
        np.testing.assert_array_equal(out, data[idx])
        np.testing.assert_array_equal(tensorjit.gather(data, idx), data[idx])
    finally:
        _tj._set_max_families(512)


def test_a_library_shutdown_inside_a_dynamic_kernels_call():
    """jit_shutdown() behind the module's back (another user of the
    library) while a DynamicKernel's call reads its inputs: KernelError,
    not the freed code run."""
    k = tensorjit.compile_dynamic("Gather", (None, 4), (None,), dtype="float32",
                                  index_dtype="int64")
    data = np.ones((8, 4), np.float32)
    idx = np.array([0, 3])
    with pytest.raises(tensorjit.KernelError, match="shut down during the call|freed by"):
        k(data, _Calls(idx, _tj._raw_shutdown))


def _rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10


def test_negative_bit_tensors_leave_nothing_behind():
    """A tensor with torch's negative bit is read through resolve_neg(), a
    copy; the copy was never let go (4 MiB a call)."""
    torch = pytest.importorskip("torch")
    neg = torch._neg_view(torch.arange(1 << 20, dtype=torch.float32))
    idx = torch.tensor([0, 1, 5])
    assert tensorjit.gather(neg, idx).tolist() == [-0.0, -1.0, -5.0]
    before = _rss_mib()
    for _ in range(100):
        tensorjit.gather(neg, idx)
    assert _rss_mib() - before < 100  # 400 MiB when each copy stayed


def test_a_detached_negative_bit_tensor_is_resolved():
    torch = pytest.importorskip("torch")
    w = torch.arange(8, dtype=torch.float32).requires_grad_()
    with torch.no_grad():
        got = tensorjit.gather(torch._neg_view(w), torch.tensor([1, 2, 3]))
    assert got.tolist() == [-1.0, -2.0, -3.0]


def test_a_producers_new_empty_is_held_to_the_output():
    """A DLPack producer whose new_empty returns a tensor of another dtype:
    refused before the kernel writes 48 bytes into 12."""
    torch = pytest.importorskip("torch")

    class Producer:
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, *args, **kwargs):
            return self.a.__dlpack__()

        def __dlpack_device__(self):
            return (1, 0)

        def new_empty(self, shape):
            return torch.empty(shape, dtype=torch.float16)

    with pytest.raises(tensorjit.SignatureError, match="dtype f16; the output's is f64"):
        tensorjit.gather(Producer(np.arange(8.0).reshape(4, 2)), np.array([1, 2, 3]))


def test_unaligned_tensors_are_read_through_a_copy():
    torch = pytest.importorskip("torch")
    raw = bytearray(1 + 4 * 12)
    t = torch.frombuffer(raw, dtype=torch.float32, offset=1, count=12)
    assert t.data_ptr() % 4 != 0
    t.copy_(torch.arange(12, dtype=torch.float32))
    got = tensorjit.gather(t.view(4, 3), torch.tensor([2, 0]))
    assert got.tolist() == [[6.0, 7.0, 8.0], [0.0, 1.0, 2.0]]
    with pytest.raises(tensorjit.SignatureError, match="not aligned to its element size"):
        tensorjit.gather(torch.ones(4, 3), torch.tensor([0, 1, 2, 3]), out=t.view(4, 3))


def test_an_in_place_write_moves_torchs_version_counter():
    """out= written by the kernel: autograd refuses a backward through a
    tensor it saved before the write, as after torch's own in-place ops,
    instead of computing gradients from the new values."""
    torch = pytest.importorskip("torch")
    x = torch.ones(3, 2)
    w = torch.ones(3, 2, requires_grad=True)
    y = (w * x).sum()  # saves x
    before = x._version
    tensorjit.scatter_update(x, torch.tensor([0]), torch.full((1, 2), 5.0), axis=0, out=x)
    assert x[0].tolist() == [5.0, 5.0]
    assert x._version > before
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_a_bool_out_moves_its_version_counter_too():
    """The bump before torch 2.1 (an in-place op on an empty view) must take
    every dtype: an add of 0 is refused on bool, and was dropped silently."""
    torch = pytest.importorskip("torch")
    import tensorjit.torch as tt
    out = torch.zeros(2, 2, dtype=torch.bool)
    before = out._version
    tt.gather(torch.tensor([[True, False], [False, True]]), 0, torch.tensor([[1, 0], [0, 0]]),
              out=out)
    assert out.tolist() == [[False, False], [True, False]]
    assert out._version > before


def test_a_parameters_result_is_torchs_own_new_empty():
    """nn.Parameter leaves new_empty as torch's: its result is taken as
    torch's (no export and check of it), and right."""
    torch = pytest.importorskip("torch")
    import tensorjit.torch as tt
    w = torch.nn.Parameter(torch.arange(12.0).reshape(4, 3))
    with torch.no_grad():
        got = tt.embedding_bag(torch.tensor([[0, 3], [1, 1]]), w, mode="sum")
    assert got.tolist() == [[9.0, 11.0, 13.0], [6.0, 8.0, 10.0]]
