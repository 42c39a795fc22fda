"""torch tensors through DLPack, and tensorjit.torch against torch itself.
Skipped where torch is not installed."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tensorjit  # noqa: E402
import tensorjit.torch as tt  # noqa: E402

from torch_inputs import TORCH2, assert_like_torch  # noqa: E402
GEN = torch.Generator().manual_seed(21)
DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int8,
          torch.int16, torch.int32, torch.int64, torch.uint8]


def rand(shape, dtype):
    if dtype.is_floating_point:
        return torch.randn(shape, generator=GEN).to(dtype)
    return torch.randint(-100 if dtype != torch.uint8 else 0, 100, shape, generator=GEN,
                         dtype=dtype)


def rand_shape(rank, low=1, high=6):
    return tuple(int(d) for d in torch.randint(low, high, (rank,), generator=GEN))


def rint(high):
    return int(torch.randint(0, high, (1,), generator=GEN))


# The library's names on tensors: a tensor in, a tensor out

@pytest.mark.parametrize("dtype", DTYPES)
def test_gather_takes_and_returns_tensors(dtype):
    data = rand((7, 3), dtype)
    idx = torch.tensor([6, 0, -1, 2])  # -1 as torch's indexing takes it
    got = tensorjit.gather(data, idx, 0, index_policy="negative-wraps")
    assert isinstance(got, torch.Tensor) and got.dtype == dtype
    assert torch.equal(got, data[idx])


def test_bool_tensors_are_read_through_their_numpy_view():
    data = torch.tensor([[True, False], [False, False]])
    got = tensorjit.gather(data, torch.tensor([1, 0]), 0)
    assert got.dtype == torch.bool and torch.equal(got, data[[1, 0]])


def test_out_tensor_is_written_in_place_and_untouched_on_error():
    data = rand((6, 4), torch.float32)
    out = torch.zeros(2, 4)
    assert tensorjit.gather(data, torch.tensor([5, 1]), 0, out=out) is out
    assert torch.equal(out, data[[5, 1]])
    before = out.clone()
    with pytest.raises(IndexError):
        tensorjit.gather(data, torch.tensor([6, 1]), 0, out=out)
    assert torch.equal(out, before)
    with pytest.raises(ValueError, match="dtype"):
        tensorjit.gather(data, torch.tensor([5, 1]), 0, out=torch.zeros(2, 4, dtype=torch.float64))
    with pytest.raises(ValueError, match="shape"):
        tensorjit.gather(data, torch.tensor([5, 1]), 0, out=torch.zeros(3, 4))


def test_kv_cache_update_in_place_on_a_tensor():
    cache = torch.zeros(2, 16, 8, dtype=torch.float16)
    new = rand((2, 3, 8), torch.float16)
    pos = torch.tensor([4, 9, 15])
    want = cache.clone()
    want[:, pos] = new
    ptr = cache.data_ptr()
    tensorjit.scatter_update(cache, pos, new, 1, out=cache)
    assert cache.data_ptr() == ptr and torch.equal(cache, want)


def test_strided_tensors_give_torchs_result():
    data = rand((5, 6), torch.float32)
    t = data.t()  # not contiguous: read through one copy
    idx = torch.tensor([5, 0, 3])
    assert torch.equal(tensorjit.gather(t, idx, 0), t[idx])
    with pytest.raises(ValueError, match="contiguous"):
        tensorjit.gather(data, idx, 1, out=torch.empty(3, 5).t())


def test_a_tensor_dlpack_refuses_raises_a_tensorjit_error():
    data = torch.ones(3, 2).to_sparse()  # neither __dlpack__ nor .numpy() take it
    with pytest.raises(tensorjit.SignatureError, match="DLPack"):
        tensorjit.gather(data, torch.tensor([0]), 0)


def test_a_tensor_that_requires_grad_is_read_detached():
    """DLPack refuses to export it (a module's weight, a leaf or not); the
    kernels are forward-only, so it is read detached and the result has
    no history. An out that requires grad stays refused, as torch refuses
    to write into one in place."""
    leaf = torch.rand(3, 2, requires_grad=True)
    for data in (leaf, leaf * 2, torch.nn.Parameter(torch.rand(3, 2))):
        with pytest.warns(UserWarning, match=r"data requires grad .* forward-only"):
            got = tensorjit.gather(data, torch.tensor([2, 0]), 0)
        assert not got.requires_grad
        assert torch.equal(got, data.detach()[[2, 0]])
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said is meant: no warning
        for quiet in (torch.no_grad, torch.inference_mode):
            with quiet():
                assert torch.equal(tensorjit.gather(leaf, torch.tensor([1]), 0), leaf[[1]])
    with pytest.raises(tensorjit.SignatureError):
        tensorjit.gather(leaf.detach(), torch.tensor([0]), 0, out=torch.zeros(1, 2,
                                                                              requires_grad=True))


def test_the_requires_grad_warning_names_torchs_argument():
    """Through tensorjit.torch the warning names the argument by torch's
    name for it in that function (it named the library's: table, data,
    updates); tensorjit's own functions keep the library's names."""
    weight = torch.nn.Parameter(torch.rand(10, 4))
    leaf = torch.rand(3, 3, requires_grad=True)
    inp, offsets, index = torch.tensor([1, 2, 7, 7]), torch.tensor([0, 3]), torch.tensor([[0, 1, 2]])
    import tensorjit.torch as tt
    cases = [
        (lambda: tt.embedding_bag(inp, weight, offsets, per_sample_weights=leaf[0, :].repeat(2)[:4],
                                  mode="sum"), ["weight", "per_sample_weights"]),
        (lambda: tt.embedding(inp, weight), ["weight"]),
        (lambda: tt.gather(leaf, 0, index), ["input"]),
        (lambda: tt.index_select(leaf, 0, torch.tensor([2])), ["input"]),
        (lambda: tt.scatter_add(leaf, 0, index, leaf), ["input", "src"]),
        (lambda: tt.scatter_reduce(leaf, 0, index, leaf, "amax"), ["input", "src"]),
        (lambda: tt.index_add(torch.zeros(3, 3), 0, torch.tensor([1]), leaf[:1]), ["source"]),
        (lambda: tensorjit.gather(leaf, torch.tensor([1]), 0), ["data"]),
    ]
    import warnings
    for call, names in cases:
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            call()
        assert [str(w.message).split(" requires grad")[0] for w in said] == \
            [f"tensorjit: {name}" for name in names]
        assert all(w.filename == __file__ for w in said)  # the caller's line


def test_torch_jit_trace_is_refused():
    """The tracer would record the result's new_empty and not the kernel's
    writes: the traced function returned uninitialised memory (a user's
    trial). Outside a trace the same call runs."""
    data, idx = torch.rand(5, 3), torch.tensor([4, 1])
    with pytest.raises(tensorjit.KernelError, match="torch.jit.trace"):
        torch.jit.trace(lambda d, i: tensorjit.gather(d, i, 0), (data, idx))
    with pytest.raises(tensorjit.KernelError, match="torch.jit.trace"):
        torch.jit.trace(lambda d, i: tensorjit.gather(d, i, 0, out=torch.empty(2, 3)),
                        (data, idx))
    assert torch.equal(tensorjit.gather(data, idx, 0), data[idx])


def test_torch_fx_tracing_is_refused_plainly():
    """torch.fx hands the functions a Proxy: it gave an IndexError from
    deep inside torch.fx (a user's trial), now a tensorjit.Error saying so."""
    import torch.fx

    class Bags(torch.nn.Module):
        def forward(self, i, w, o):
            return tt.embedding_bag(i, w, o, mode="sum")

    with pytest.raises(tensorjit.SignatureError, match="torch.fx"):
        torch.fx.symbolic_trace(Bags())


def test_negative_bit_tensors_give_their_values():
    """torch._neg_view's memory holds the negated values; its DLPack export
    handed out that memory, so gather returned them unnegated."""
    x = rand((4, 3), torch.float32)
    idx = torch.tensor([3, 0])
    assert torch.equal(tensorjit.gather(torch._neg_view(x), idx, 0), -x[idx])
    assert torch.equal(tensorjit.gather(x, torch._neg_view(torch.tensor([-3, 0])), 0), x[idx])
    out = torch.zeros(2, 3)
    with pytest.raises(tensorjit.SignatureError, match="negative bit"):
        tensorjit.gather(x, idx, 0, out=torch._neg_view(out))
    assert torch.equal(out, torch.zeros(2, 3))


def test_tensor_subclasses_and_slices_are_read_where_they_lie():
    class Tagged(torch.Tensor):
        pass
    x = rand((6, 3), torch.float32)
    idx = torch.tensor([4, 1])
    got = tensorjit.gather(x.as_subclass(Tagged), idx, 0)  # through DLPack
    assert isinstance(got, Tagged) and torch.equal(got.as_subclass(torch.Tensor), x[idx])
    tail = x[2:]  # a view with a storage offset: data_ptr() points at its first element
    assert torch.equal(tensorjit.gather(tail, torch.tensor([0, 3]), 0), tail[[0, 3]])
    assert torch.equal(tensorjit.gather(x.to(torch.bfloat16), idx, 0), x.to(torch.bfloat16)[idx])


def test_numpy_data_with_tensor_indices_gives_numpy():
    data = np.arange(12.0).reshape(4, 3)
    got = tensorjit.gather(data, torch.tensor([3, 1]), 0)
    assert isinstance(got, np.ndarray)
    np.testing.assert_array_equal(got, data[[3, 1]])


# tensorjit.torch against torch

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("trial", range(4))
def test_gather_matches_torch_smaller_index_dims_too(dtype, trial):
    shape = rand_shape(rint(3) + 1)
    x = rand(shape, dtype)
    dim = rint(len(shape))
    ishape = tuple(rint(s) + 1 if d != dim else rint(6) for d, s in enumerate(shape))
    idx = torch.randint(0, shape[dim], ishape, generator=GEN)
    assert torch.equal(tt.gather(x, dim, idx), torch.gather(x, dim, idx))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("trial", range(4))
def test_index_select_matches_torch(dtype, trial):
    shape = rand_shape(rint(3) + 1)
    x = rand(shape, dtype)
    dim = rint(len(shape)) - len(shape) * (trial % 2)
    idx = torch.randint(0, shape[dim], (rint(6),), generator=GEN)
    assert torch.equal(tt.index_select(x, dim, idx), torch.index_select(x, dim, idx))
    one = torch.tensor(shape[dim] - 1)
    assert torch.equal(tt.index_select(x, dim, one), torch.index_select(x, dim, one))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int32, torch.int64])
@pytest.mark.parametrize("trial", range(4))
def test_index_add_matches_torch(dtype, trial):
    shape = rand_shape(rint(3) + 1)
    x = rand(shape, dtype)
    dim = rint(len(shape))
    n = rint(8)
    idx = torch.randint(0, shape[dim], (n,), generator=GEN)
    sshape = list(shape)
    sshape[dim] = n
    src = rand(tuple(sshape), dtype)
    alpha = 2 if trial % 2 else 1
    got, want = tt.index_add(x, dim, idx, src, alpha=alpha), x.index_add(dim, idx, src,
                                                                         alpha=alpha)
    if dtype.is_floating_point:
        assert torch.allclose(got, want, rtol=1e-5, atol=1e-5)
    else:
        assert torch.equal(got, want)


def scatter_case(dtype, distinct):
    shape = rand_shape(rint(3) + 1)
    x = rand(shape, dtype)
    dim = rint(len(shape))
    ishape = tuple(rint(s) + 1 if d != dim else rint(4) + 1 for d, s in enumerate(shape))
    if distinct:  # torch leaves the winner of duplicates undefined
        ishape = tuple(min(i, shape[dim]) if d == dim else i for d, i in enumerate(ishape))
        perm = torch.argsort(torch.rand(ishape[:dim] + (shape[dim],) + ishape[dim + 1:],
                                        generator=GEN), dim=dim)
        idx = perm.narrow(dim, 0, ishape[dim])
    else:
        idx = torch.randint(0, shape[dim], ishape, generator=GEN)
    src = rand(tuple(i + (d % 2) for d, i in enumerate(ishape)), dtype)  # larger than index
    return x, dim, idx, src


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("trial", range(4))
def test_scatter_matches_torch(dtype, trial):
    x, dim, idx, src = scatter_case(dtype, distinct=True)
    assert torch.equal(tt.scatter(x, dim, idx, src), torch.scatter(x, dim, idx, src))
    assert torch.equal(tt.scatter(x, dim, idx, value=3), torch.scatter(x, dim, idx, value=3))


@pytest.mark.parametrize("dtype", [torch.float64, torch.int32, torch.int64])
@pytest.mark.parametrize("trial", range(4))
def test_scatter_add_matches_torch(dtype, trial):
    x, dim, idx, src = scatter_case(dtype, distinct=False)
    assert torch.allclose(tt.scatter_add(x, dim, idx, src), torch.scatter_add(x, dim, idx, src))


@pytest.mark.filterwarnings("ignore:scatter_reduce\\(\\) is in beta")
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.int64])
@pytest.mark.parametrize("trial", range(3))
def test_scatter_reduce_matches_torch(reduce, include_self, dtype, trial):
    x, dim, idx, src = scatter_case(dtype, distinct=False)  # src larger than index
    got = tt.scatter_reduce(x, dim, idx, src, reduce, include_self=include_self)
    want = torch.scatter_reduce(x, dim, idx, src, reduce, include_self=include_self)
    if dtype.is_floating_point:
        assert torch.allclose(got, want, rtol=1e-5, atol=1e-6)
    else:
        assert torch.equal(got, want)


def test_smaller_index_dims_read_the_tensors_where_they_lie(monkeypatch):
    """torch's smaller index dims are an op flavour (torch_dims), not a cut view of
    input or src: neither is copied to a contiguous tensor."""
    x = rand((5, 6, 4), torch.float32)
    idx = torch.randint(0, 6, (3, 2, 2), generator=GEN)
    src = rand((4, 3, 5), torch.float32)
    want_gather = torch.gather(x, 1, idx)
    want_scatter = torch.scatter_reduce(x, 1, idx, src, "sum")
    copies = []
    contiguous = torch.Tensor.contiguous

    def spy(self, *args, **kwargs):
        copies.append(tuple(self.shape))
        return contiguous(self, *args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "contiguous", spy)
    assert torch.equal(tt.gather(x, 1, idx), want_gather)
    assert torch.allclose(tt.scatter_reduce(x, 1, idx, src, "sum"), want_scatter)
    assert copies == []


@pytest.mark.parametrize("trial", range(8))
def test_library_torch_dims_matches_torch_on_numpy_and_tensors(trial):
    shape = rand_shape(rint(4) + 1)
    dim = rint(len(shape))
    ishape = tuple(rint(s) + 1 if d != dim else rint(5) for d, s in enumerate(shape))
    x = rand(shape, torch.float64)
    idx = torch.randint(0, shape[dim], ishape, generator=GEN)
    want = torch.gather(x, dim, idx)
    assert torch.equal(tensorjit.gather_elements(x, idx, dim, torch_dims=True), want)
    np.testing.assert_array_equal(
        tensorjit.gather_elements(x.numpy(), idx.numpy(), dim, torch_dims=True), want.numpy())
    src = rand(tuple(i + rint(3) for i in ishape), torch.float64)
    want = torch.scatter_reduce(x, dim, idx, src, "amax", include_self=trial % 2 == 0)
    got = tensorjit.scatter_elements_update(x, idx, src, dim, "max", trial % 2 == 0,
                                            torch_dims=True)
    assert torch.equal(got, want)


def test_torch_dims_refusals_name_the_input_dim_and_value():
    x = rand((3, 4), torch.float32)
    # tensorjit.torch names them as torch does: input, index, src
    with pytest.raises(ValueError, match=r"^index.shape\[0\]=5 must not exceed "
                                         r"input.shape\[0\]=3"):
        tt.gather(x, 1, torch.zeros(5, 1, dtype=torch.int64))
    with pytest.raises(ValueError, match=r"^src.shape\[1\]=1 must not be smaller than "
                                         r"index.shape\[1\]=2"):
        tt.scatter(x, 0, torch.zeros(2, 2, dtype=torch.int64), torch.ones(2, 1))
    with pytest.raises(IndexError, match=r"^index\[1\] = 7 is out of range for input "
                                         r"dimension 0 of size 3"):
        tt.index_add(x, 0, torch.tensor([0, 7]), torch.ones(2, 4))  # a 1-tuple, unbracketed
    with pytest.raises(ValueError, match=r"source has shape \(2, 3\).*\(2, 4\)"):
        tt.index_add(x, 0, torch.tensor([0, 1]), torch.ones(2, 3))  # torch's rule, not ours
    with pytest.raises(ValueError, match=r"source has shape \(2, 2\).*\(3, 2\)"):
        tt.index_add(x, 1, torch.tensor([0, 1]), torch.ones(2, 2))  # smaller: torch refuses
    with pytest.raises(ValueError, match=r"index must be 1-D"):
        tt.index_add(x, 0, torch.tensor([[0, 1]]), torch.ones(2, 4))
    with pytest.raises(TypeError, match=r"index.long\(\)"):
        tt.gather(x, 0, torch.zeros(1, 1, dtype=torch.int16))
    with pytest.raises(TypeError, match=r"index.astype\(numpy.int64\)"):  # numpy's own words
        tt.gather(x.numpy(), 0, np.zeros((1, 1), np.int16))
    ints = torch.zeros(3, 4, dtype=torch.int64)
    got = tt.index_add(ints, 0, torch.tensor([1]), torch.full((1, 4), 3), alpha=1.5)
    assert torch.equal(got, torch.index_add(ints, 0, torch.tensor([1]), torch.full((1, 4), 3),
                                            alpha=1.5))  # alpha truncated, as torch does
    with pytest.raises(ValueError, match=r"indices.shape\[0\]=2 must equal data.shape\[0\]=3"):
        tensorjit.gather_elements(x, torch.zeros(2, 4, dtype=torch.int64), 1)  # OpenVINO's rule


def test_torch_namespace_errors_are_tensorjit_errors():
    x = rand((3, 4), torch.float32)
    with pytest.raises(IndexError):
        tt.gather(x, 1, torch.tensor([[4]]))
    with pytest.raises(tensorjit.Error):
        tt.scatter_reduce(x, 1, torch.tensor([[0]]), torch.ones(1, 1), "median")
    with pytest.raises(tensorjit.Error):
        tt.gather(x, 1, torch.zeros(5, 1, dtype=torch.int64))  # larger than input


SCALAR_CASES = [  # (input, index, src) ranks: torch takes 0-D and 1-D as one rank
    ((), (), ()), ((), (1,), ()), ((), (1,), (1,)), ((), (), (2,)), ((3,), (), ()),
    ((3,), (), (2,)), ((), (2,), (2,)),
]


@pytest.mark.parametrize("shapes", SCALAR_CASES, ids=str)
def test_0d_tensors_are_vectors_of_one_as_in_torch(shapes):
    """torch's gather, scatter, scatter_add, scatter_reduce, index_select and
    index_add take a 0-D input, index or src as a vector of one (the
    library refused them: 'rank(input)=0 (a scalar) must be at least 1');
    results and out= have torch's shapes."""
    in_shape, ix_shape, src_shape = shapes
    x, src = rand(in_shape, torch.float32), rand(src_shape, torch.float32)
    index = torch.zeros(ix_shape, dtype=torch.long)
    calls = [(tt.gather, torch.gather, (x, 0, index), {}),
             (tt.scatter, torch.scatter, (x, -1, index, src), {}),
             (tt.scatter, torch.scatter, (x, 0, index), {"value": 2.5}),
             (tt.scatter_add, torch.scatter_add, (x, 0, index, src), {}),
             (tt.scatter_reduce, torch.scatter_reduce, (x, 0, index, src, "amax"),
              {"include_self": False})]
    if index.numel() == 1:
        calls.append((tt.index_select, torch.index_select, (x, 0, index), {}))
    if x.dim() <= 1 and src.numel() == index.numel():  # a 0-D source of a 1-D input too
        calls.append((tt.index_add, torch.index_add, (x, 0, index, src), {"alpha": 2}))
    for ours, theirs, args, kw in calls:
        try:
            want = theirs(*args, **kw)
        except (RuntimeError, IndexError):  # torch refuses it: so do we
            if TORCH2 and theirs is torch.index_add and src.dim() == 0 and x.dim() == 1:
                # but a 0-D source of a 1-D input, which torch 1.13 takes as a
                # vector of one and torch 2 refuses: taken as 1.13 took it
                want = torch.index_add(x, 0, index.reshape(-1), src.reshape(1), **kw)
                assert torch.equal(ours(*args, **kw), want)
                continue
            with pytest.raises(tensorjit.Error):
                ours(*args, **kw)
            continue
        got = ours(*args, **kw)
        assert got.shape == want.shape and torch.equal(got, want), (ours.__name__, got, want)
        out = torch.full(want.shape, -7.0)
        assert ours(*args, **kw, out=out) is out and torch.equal(out, want), ours.__name__
    x0 = torch.tensor(4.0)
    with pytest.raises(tensorjit.SignatureError, match="one index, not 2"):
        tt.index_select(x0, 0, torch.tensor([0, 0]))
    with pytest.raises(tensorjit.IndexOutOfRange):
        tt.gather(x0, 0, torch.tensor(1))
    with pytest.raises(tensorjit.SignatureError, match="dim 1 is out of range for rank 0"):
        tt.gather(x0, 1, torch.tensor(0))


def test_a_dim_that_is_no_integer_is_named_dim():
    with pytest.raises(tensorjit.TypeMismatch, match="dim must be an integer, not float"):
        tt.gather(torch.ones(2, 2), 1.0, torch.zeros(2, 1, dtype=torch.long))
    # torch refuses a bool dim ("must be int, not bool"); False was taken as 0
    for call in (lambda: tt.gather(torch.ones(2, 2), False, torch.zeros(2, 1, dtype=torch.long)),
                 lambda: tt.index_select(torch.ones(2, 2), True, torch.zeros(1, dtype=torch.long))):
        with pytest.raises(tensorjit.TypeMismatch, match="dim must be an integer, not bool"):
            call()
    with pytest.raises(TypeError):
        torch.gather(torch.ones(2, 2), False, torch.zeros(2, 1, dtype=torch.long))


@pytest.mark.filterwarnings("ignore:scatter_reduce\\(\\) is in beta")
@pytest.mark.parametrize("dtype", [torch.uint8, torch.int16, torch.float32, torch.bool])
def test_an_empty_index_of_any_dtype_is_taken_as_torch_takes_it(dtype):
    """torch's gather and scatters check index's dtype only when it holds
    elements (torch's own OpInfo samples gather with an empty uint8 index);
    gather refused an empty uint8 or int16 index, all four a float or bool
    one. torch 1.13 checks no shape rule for an empty index either
    (test_an_empty_index_of_any_shape_is_taken_as_torch_takes_it)."""
    x = rand((2, 3), torch.float32)
    index, src = torch.empty((2, 0), dtype=dtype), torch.ones(2, 0)
    calls = [(tt.gather, torch.gather, (x, 1, index)),
             (tt.scatter, torch.scatter, (x, 1, index, src)),
             (tt.scatter_add, torch.scatter_add, (x, 1, index, src)),
             (tt.scatter_reduce, torch.scatter_reduce, (x, 1, index, src, "amax"))]
    for ours, theirs, args in calls:
        want = theirs(*args)
        got = ours(*args)
        assert got.shape == want.shape and torch.equal(got, want), ours.__name__
        if dtype != torch.bool:  # numpy too (numpy's bool is numpy's own)
            got = ours(*(a.numpy() if isinstance(a, torch.Tensor) else a for a in args))
            assert np.array_equal(got, want.numpy()), ours.__name__
    wide = torch.empty((5, 0), dtype=dtype)  # beyond x's dim 0, empty: torch 1.13 takes it
    assert tt.gather(x, 1, wide).shape == torch.gather(x, 1, wide).shape == (5, 0)
    with pytest.raises(tensorjit.TypeMismatch):  # one that holds elements is still refused
        tt.gather(x, 1, torch.zeros((2, 1), dtype=dtype))


ALPHAS = [True, False, 0, 2, -1, -2, 127, 128, 255, 256, -128, -129, -255, -256, 2.7, -0.5,
          -1.0, 255.5, 300.0, 1e6, 1e40, float("inf"), float("nan"), 2**31, 2**63 - 1,
          np.bool_(False), np.bool_(True), np.int8(-3), np.float32(2.5)]  # numpy's too


@pytest.mark.parametrize("dtype", [torch.bool, torch.uint8, torch.int8, torch.int16,
                                   torch.int64, torch.float16, torch.bfloat16, torch.float32])
@pytest.mark.filterwarnings("error::RuntimeWarning")  # numpy's 'invalid value' reached users
def test_index_add_reads_alpha_as_torch_does(dtype):
    """torch reads alpha in input's dtype: for bool any value is True or
    False (alpha=False was refused: bool * 0 is int64 in torch and numpy),
    an integer type truncates a float alpha and refuses one it cannot hold
    (an unsigned type takes integers in [-max, max], wrapping; -1 on a
    uint8 numpy array was refused, numpy widening the product to int16),
    a float type refuses a finite alpha beyond its largest (tensorjit
    wrapped or overflowed them all). Sources of small integers, so that
    alpha * source is exact and torch's fused multiply-add rounds alike."""
    x = torch.tensor([True, False, False]) if dtype == torch.bool else \
        torch.tensor([1, 2, 3]).to(dtype)
    src = torch.tensor([True, True, False]) if dtype == torch.bool else \
        torch.tensor([3, 0, 7]).to(dtype)
    index = torch.tensor([2, 0, 1])
    for alpha in ALPHAS:
        kinds = [(x, index, src)]
        if dtype != torch.bfloat16:
            kinds.append((x.numpy(), index.numpy(), src.numpy()))
        try:
            want = x.index_add(0, index, src, alpha=alpha)
        except RuntimeError:  # 'value cannot be converted ... without overflow'
            for a, i, s in kinds:
                with pytest.raises(tensorjit.SignatureError, match="does not fit"):
                    tt.index_add(a, 0, i, s, alpha=alpha)
            continue
        for a, i, s in kinds:
            got = torch.as_tensor(tt.index_add(a, 0, i, s, alpha=alpha))
            assert got.dtype == want.dtype and torch.equal(got.isnan(), want.isnan()), alpha
            if TORCH2 and dtype in (torch.float16, torch.bfloat16):
                # torch 2 adds alpha * src in f32 and rounds once; here (and in
                # torch 1.13) alpha and the product are rounded to the dtype,
                # then the sum: SPEC's arithmetic bit for bit, torch's within ulps
                prod = (src.float() * torch.tensor(float(alpha), dtype=dtype).float()).to(dtype)
                spec = x.clone()
                spec[index] = (x[index].float() + prod.float()).to(dtype)
                assert torch.equal(got.isnan(), spec.isnan()), alpha
                assert torch.equal(got.nan_to_num(0.5), spec.nan_to_num(0.5)), (alpha, got, spec)
                assert_like_torch(got, want)
                continue
            assert torch.equal(got.nan_to_num(0.5), want.nan_to_num(0.5)), (alpha, got, want)


@pytest.mark.filterwarnings("ignore:scatter_reduce\\(\\) is in beta")
def test_the_extensions_torch_refuses_give_the_int64_result():
    """What the README lists as extensions (torch refuses them; torch's own
    OpInfo error inputs expect 'Expected dtype int64 for index' and
    "'weight' must be 2-D") gives what torch gives for the int64 index, or
    the rows of weight: never other values."""
    import torch.nn.functional as F
    x = rand((4, 5), torch.float32)
    long_index = torch.tensor([[3, 0, 1], [2, 2, 0]])
    src = rand((2, 3), torch.float32)
    for dt in [torch.int32, torch.int16, torch.uint8]:
        index = long_index.to(dt)
        try:  # torch 1.13 refuses them (torch 2 takes int32): ours equal int64's either way
            torch.scatter(x, 0, index, src)
        except RuntimeError as e:  # torch 2: "Expected dtype int32/int64 for index"
            assert "Expected dtype int" in str(e) and "for index" in str(e)
        if dt == torch.int32:
            assert torch.equal(tt.gather(x, 0, index), torch.gather(x, 0, long_index))
        assert torch.equal(tt.scatter(x, 0, index, src), torch.scatter(x, 0, long_index, src))
        assert torch.equal(tt.scatter_add(x, 0, index, src),
                           torch.scatter_add(x, 0, long_index, src))
        assert torch.equal(tt.scatter_reduce(x, 0, index, src, "amax"),
                           torch.scatter_reduce(x, 0, long_index, src, "amax"))
        rows = torch.tensor([3, 1, 3])
        if dt != torch.int32:  # torch takes int32 for these three
            assert torch.equal(tt.index_select(x, 0, rows.to(dt)), x[rows])
            assert torch.equal(tt.embedding(rows.to(dt), x), x[rows])
            assert torch.equal(tt.index_add(x, 0, rows[:2].to(dt), src[:, :1].expand(2, 5)),
                               x.index_add(0, rows[:2], src[:, :1].expand(2, 5)))
    for shape in [(4,), (4, 2, 3)]:
        weight = rand(shape, torch.float32)
        ids = torch.tensor([[3, 0], [1, 1]])
        with pytest.raises(RuntimeError, match="'weight' must be 2-D"):
            F.embedding(ids, weight)
        assert torch.equal(tt.embedding(ids, weight), weight[ids])
        got = tt.embedding_bag(ids, weight, mode="sum")
        assert got.shape == (2,) + shape[1:]
        flat = weight.reshape(4, -1)  # torch's own bag over the rows as vectors
        want = F.embedding_bag(ids, flat, mode="sum")
        assert torch.equal(got.reshape(2, -1), want), shape


@pytest.mark.parametrize("kind", ["tensor", "numpy"])
def test_an_empty_index_of_any_shape_is_taken_as_torch_takes_it(kind):
    # torch 1.13 checks no shape rule for an index with no elements (its own
    # test_scatter_gather's empty-index case: a (2, 2) input, a (0,) index):
    # gather gives an empty result of index's shape, the scatters copy input
    conv = (lambda t: t) if kind == "tensor" else (lambda t: t.numpy())
    back = (lambda r: r) if kind == "tensor" else torch.from_numpy
    x = torch.randn(2, 2, generator=GEN)
    for shape in [(0,), (0, 3, 5), (2, 0, 7)]:
        index = torch.empty(shape, dtype=torch.int64)
        got = back(np.asarray(tt.gather(conv(x), 0, conv(index))))
        assert tuple(got.shape) == tuple(torch.gather(x, 0, index).shape) == shape
        for src in [torch.randn(2, 2, generator=GEN), torch.randn(7), torch.randn(3, 1, 4)]:
            assert torch.equal(back(tt.scatter(conv(x), 0, conv(index), conv(src))), x)
            assert torch.equal(back(tt.scatter_add(conv(x), -1, conv(index), conv(src))), x)
            for reduce in ["sum", "prod", "mean", "amax", "amin"]:
                got = back(tt.scatter_reduce(conv(x), 1, conv(index), conv(src), reduce,
                                             include_self=False))
                assert torch.equal(got, x)
        assert torch.equal(back(tt.scatter(conv(x), 0, conv(index), value=3.0)), x)
    scalar = torch.tensor(2.5)  # a 0-D input too
    empty = torch.empty(0, 2, dtype=torch.int64)
    assert torch.equal(back(tt.scatter(conv(scalar), 0, conv(empty), conv(torch.ones(3)))),
                       scalar)
    assert tuple(back(tt.gather(conv(scalar), 0, conv(empty))).shape) == (0, 2)
    # what torch still checks: dim's range and src's dtype
    index = conv(torch.empty(0, dtype=torch.int64))
    with pytest.raises(tensorjit.SignatureError, match=r"dim 2 is out of range for rank 2"):
        tt.scatter(conv(x), 2, index, conv(torch.ones(2)))
    with pytest.raises(tensorjit.SignatureError, match=r"src element type f64.*f32"):
        tt.scatter(conv(x), 0, index, conv(torch.ones(2, dtype=torch.float64)))


def test_index_add_names_the_position_in_index_itself():
    # along a dim other than 0 the library sees index spread over source's
    # shape; the error names index's own position, as for dim 0
    x = torch.zeros(3, 4, 2)
    for dim, index, shape in [(1, [1, 4], (3, 2, 2)), (-1, [0, 1, -1], (3, 4, 3)),
                              (0, [0, 3], (2, 4, 2))]:
        for conv in (lambda t: t, lambda t: t.numpy()):
            bad = [i for i, v in enumerate(index) if not 0 <= v < x.shape[dim]][0]
            with pytest.raises(tensorjit.IndexOutOfRange,
                               match=rf"index\[{bad}\] = {index[bad]} is out of range for "
                                     rf"input dimension {dim % 3} of size {x.shape[dim]}"):
                tt.index_add(conv(x), dim, conv(torch.tensor(index)), conv(torch.ones(shape)))


def test_usual_calls_take_the_short_path(monkeypatch):
    """gather, scatter, scatter_add and scatter_reduce of tensors of one rank,
    an index holding elements and an int dim go to the library as they come
    (tt._plain_dim): the general path's steps, which a small call paid about
    its kernel's time again for, are not taken (made to fail here), and the
    results, out= and errors are torch's and the general path's."""
    def general(*args):
        raise AssertionError("the general path ran")
    monkeypatch.setattr(tt, "_empty_index", general)
    monkeypatch.setattr(tt, "_no_updates", general)
    src = rand((4, 3), torch.float32)
    index = torch.tensor([[3, 0, 1], [2, 2, 0]])
    upd = rand((2, 3), torch.float32)
    for dim in (0, -2, 1, -1):
        idx = index if dim in (0, -2) else index % 3
        assert torch.equal(tt.gather(src, dim, idx), torch.gather(src, dim, idx))
        assert torch.equal(tt.scatter(src, dim, idx, upd), torch.scatter(src, dim, idx, upd))
        assert torch.equal(tt.scatter_add(src, dim, idx, upd),
                           torch.scatter_add(src, dim, idx, upd))
        for reduce in ("amax", "prod"):
            assert torch.equal(tt.scatter_reduce(src, dim, idx, upd, reduce),
                               torch.scatter_reduce(src, dim, idx, upd, reduce))
    out = torch.empty(2, 3)
    assert tt.gather(src, 0, index, out=out) is out
    assert torch.equal(out, torch.gather(src, 0, index))
    with pytest.raises(tensorjit.IndexOutOfRange,
                       match=r"index\[0,0\] = 3 is out of range for input dimension 1 of size 3"):
        tt.gather(src, 1, index)
    with pytest.raises(tensorjit.IndexOutOfRange, match=r"index\[0,0\] = 3 is out of range"):
        tt.scatter(src, -1, index, upd)
    # an empty index, a list, a bad dim: the general path, as before
    monkeypatch.undo()
    assert tt.gather(src, 0, index[:0]).shape == (0, 3)
    assert torch.equal(tt.gather(src, 0, [[1, 0, 3]]),
                       torch.gather(src, 0, torch.tensor([[1, 0, 3]])))
    with pytest.raises(tensorjit.SignatureError, match="dim 2 is out of range"):
        tt.gather(src, 2, index)
