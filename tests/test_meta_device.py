"""The meta device against real torch's: shapes, dtypes, strides, errors, modules built on it.

The checks run in fresh interpreters: the first meta tensor turns on the dispatch point's
meta check for the rest of the process, and the suite's other tests must not run with it on."""

import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")

# Ops on meta tensors; each line is an expression over x (4, 6), i (4,) int64, img (2, 3, 8, 8)
# and w (5, 3, 3, 3), all on 'meta'.
OPS = """
x.sum(0); x.sum(); x.mean(-1); x.var(0); x.max(); x.amax(1); x.norm(); x.prod(1)
x.argmax(1); x.max(1).values; x.max(1).indices; x.topk(2).values; x.cumsum(0)
torch.cat([x, x]); torch.stack([x, x]); torch.where(x > 0, x, 0.); x.masked_fill(x > 0, 0.)
F.relu(x); F.gelu(x); x.softmax(-1); x.log_softmax(-1); F.layer_norm(x, (6,)); F.dropout(x, 0.5)
F.linear(x, torch.empty(3, 6, device='meta')); x @ x.t(); torch.einsum('ij,kj->ik', x, x)
F.conv2d(img, w); F.max_pool2d(img, 2); F.batch_norm(img, None, None, training=True)
F.conv2d(img, w, torch.empty(5, device='meta'), stride=2); F.conv_transpose2d(F.conv2d(img, w), w)
F.scaled_dot_product_attention(img, img, img); F.embedding(i, x); F.cross_entropy(x, i)
F.mse_loss(x, x); x[i]; x.gather(1, torch.empty(4, 2, dtype=torch.long, device='meta'))
x ** 2; i.float(); i / 2; x.clone(); x.t(); x.t().contiguous(); x.view(3, 8); x.unsqueeze(0)
x[:, 1:]; x[0]; x.expand(2, 4, 6); x.permute(1, 0); torch.outer(x[0], x[1]); x.triu()
x[1:, ::2].storage_offset(); x.t()[2].stride(); x.narrow(1, 2, 3).storage_offset(); x.mT.stride()
x.unsqueeze(1).stride(); x.t().reshape(24).stride(); x.view(2, 2, 6).transpose(0, 2).stride()
x.diagonal().stride(); x.split(2)[1].storage_offset(); x.unbind(1)[3].stride()
x.unfold(1, 2, 2).stride()
x.as_strided((2, 2), (1, 3), 1).stride(); x.select(0, 2).storage_offset(); x.flatten().stride()
h * 2 + 1; h.sum(0); h @ h; F.linear(h, h); h.t().contiguous(); h.exp().mean(); h > 0
x.repeat(2, 1); F.pad(x, (1, 1)); x == x; torch.arange(4, device='meta').float() / 4
torch.zeros(3, 2, device='meta'); torch.ones(2, dtype=torch.int32, device='meta')
torch.full((2, 2), 7, device='meta'); torch.empty_strided((2, 3), (1, 2), device='meta')
torch.eye(3, device='meta'); torch.linspace(0, 1, 5, device='meta')
torch.tensor([1, 2], device='meta'); torch.randn(3, 2, device='meta'); torch.rand(2, device='meta')
torch.randint(0, 5, (3,), device='meta'); torch.randperm(4, device='meta').dtype
torch.zeros_like(x); torch.ones_like(torch.ones(2), device='meta'); x.new_zeros(5)
x.new_full((2,), 3.)
torch.ones(2, 3).to('meta'); x.to(torch.float64)
torch.nn.BatchNorm2d(3, device='meta').running_var
torch.nn.BatchNorm1d(2, device='meta').num_batches_tracked
torch.nn.LayerNorm(3, device='meta').bias; torch.nn.GroupNorm(1, 3, device='meta').weight
torch.nn.RMSNorm(3, device='meta').weight
torch.ones(2, 3, requires_grad=True).to('meta') * 2
"""

PROGRAM = """
import {lib} as torch
import {lib}.nn.functional as F
x = torch.empty(4, 6, device='meta')
i = torch.empty(4, dtype=torch.long, device='meta')
img = torch.empty(2, 3, 8, 8, device='meta')
w = torch.empty(5, 3, 3, 3, device='meta')
h = torch.empty(10 ** 5, 10 ** 5, device='meta')  # 40 GB if it had data
def show(v):
    if isinstance(v, torch.Tensor):
        return [str(v.device), str(v.dtype), tuple(v.shape), v.stride(), repr(v)]
    return repr(v)
def attempt(f):
    try:
        return show(f())
    except Exception as e:
        return [type(e).__name__, str(e).split(chr(10))[0]]
"""


# One program per library, in sections: each test compares its own section.
SECTIONS = {
    "ops": "for e in " + repr([e.strip() for e in OPS.replace("\n", ";").split(";") if e.strip()])
           + ":\n    print(e, attempt(lambda: eval(e)))\n",
    "tensor_api": """
    t = torch.empty(2, 3, device='meta')
    for f in (lambda: t, lambda: t.device, lambda: t.is_meta, lambda: t.is_cpu,
              lambda: t.data_ptr(), lambda: t.storage_offset(), lambda: t.get_device(),
              lambda: t.cpu(),
              lambda: t.numpy(), lambda: t.tolist(), lambda: t.to('cpu'),
              lambda: torch.tensor(1., device='meta').item(), lambda: torch.ones(2, 3).copy_(t),
              lambda: t.copy_(torch.ones(2, 3)), lambda: t.uniform_(), lambda: t.normal_(),
              lambda: t[0].fill_(1), lambda: t.add_(1), lambda: t.zero_(),
              lambda: torch.empty_like(t, device='cpu').shape,
              lambda: torch.empty(2, dtype=torch.float16, device='meta'),
              lambda: torch.empty(2, 3, device='meta', requires_grad=True),
              lambda: bool(torch.empty(1, device='meta')),
              lambda: float(torch.empty((), device='meta')), lambda: int(t.sum())):
        print(attempt(f))
    for init in ('kaiming_uniform_', 'xavier_normal_', 'trunc_normal_', 'orthogonal_', 'zeros_'):
        print(init, attempt(lambda: getattr(torch.nn.init, init)(t)))
    """,
    "modules": """
    nn = torch.nn
    with torch.device('meta'):
        m = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4), nn.Embedding(5, 4, padding_idx=0),
                          nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4))
    for k, v in m.state_dict().items():
        print(k, show(v))
    print(m[0].weight)
    print(attempt(lambda: m.to('cpu')))
    print(attempt(lambda: nn.Linear(2, 2, device='meta').to_empty(device='cpu').weight.device))
    print(attempt(lambda: nn.Linear(2, 2).to('meta').weight))
    sd = {k: torch.ones_like(v, device='cpu') for k, v in m.state_dict().items()}
    print(m.load_state_dict(sd, assign=True))
    for k, v in m.state_dict().items():
        print(k, show(v), type(v).__name__)
    print({n: (type(p).__name__, p.requires_grad, float(p.sum())) for n, p in m.named_parameters()})
    print(sorted(nn.Linear(2, 2, device='meta').weight.__dict__))
    """,
    # a meta tensor with a CPU tensor: an error where torch wants one device (CPU scalars
    # excepted), a meta result where torch's meta kernels take the mix
    "mixing": """
    c, s, n = torch.ones(4, 6), torch.tensor(2.), torch.empty((), device='meta')
    for f in (lambda: x + c, lambda: c + x, lambda: x * c, lambda: x + s, lambda: s * x,
              lambda: c + n, lambda: torch.maximum(x, c), lambda: torch.cat([x, c]),
              lambda: torch.stack([x, c]), lambda: torch.lerp(x, c, 0.5),
              lambda: torch.dot(x[0], c[0]), lambda: torch.outer(x[0], c[0]),
              lambda: F.mse_loss(x, c), lambda: F.layer_norm(x, (6,), c[0], c[0]),
              lambda: torch.logaddexp(x, c), lambda: torch.allclose(x, c),
              lambda: x.add_(c), lambda: x.floor_divide(c), lambda: x @ c.t(),
              lambda: x.index_select(0, torch.tensor([0, 1])), lambda: F.linear(x, c),
              lambda: torch.where(x > 0, x, s)):
        print(attempt(f))
    """,
}


def _run(lib):
    code = textwrap.dedent(PROGRAM.format(lib=lib))
    for name, body in SECTIONS.items():
        code += f"print('### {name}')\n" + textwrap.dedent(body)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    sections = {}
    for part in proc.stdout.split("### ")[1:]:
        name, _, text = part.partition("\n")
        sections[name] = text.splitlines()
    return sections


@pytest.fixture(scope="module")
def outputs():
    return _run("torch"), _run("glasstorch")


@pytest.mark.parametrize("section", list(SECTIONS))
def test_meta_device_matches_torch(outputs, section):
    want, got = outputs
    assert want[section], "the torch run printed nothing"
    assert got[section] == want[section]
