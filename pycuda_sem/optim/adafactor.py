"""torch.optim.Adafactor (torch >= 2.5), torch.optim.Muon and a SparseAdam that
says it cannot run here.

Adafactor (Shazeer and Stern, with torch's use of lr and eps1), per step t
and parameter p with gradient G (negated when maximize):

    beta2_t' = t^beta2_decay (the weight of the new squares, 1 - beta2_t)
    rho = min(lr, 1 / sqrt(t));  alpha = max(eps2, RMS(p)) rho
    p *= 1 - lr weight_decay
    p of 2 or more dims: the second moment is kept factored, as a row and a
        column mean of G^2 over the last two dims:
        R = lerp(R, mean(G^2, -1), beta2_t');  C = lerp(C, mean(G^2, -2), beta2_t')
        V = R C / max(mean(R, -2), eps1)   (an outer product per matrix)
    otherwise V = lerp(V, G^2, beta2_t')
    U = G / sqrt(max(V, eps1^2));  p -= alpha / max(1, RMS(U) / d) U

eps1 = None means the machine epsilon of the (first) parameter's dtype, as
torch's. State: "step" (a 0-dim CPU tensor), "row_var" / "col_var" (the
shapes of G with the last / second-to-last dim 1) or "variance", made on a
parameter's first step. foreach is accepted; there is only this one-tensor
form (torch's default for Adafactor as well).

Muon (torch >= 2.9): momentum B = lerp(B, G, 1 - mu), the update lerp(G, B,
mu) (nesterov) or B, orthogonalised by a quintic Newton-Schulz iteration in
bfloat16 (as torch's), p *= 1 - lr weight_decay, p -= lr' O with lr' lr
scaled by the shape (adjust_lr_fn). 2-D parameters only.
"""
import math

import pycuda_sem as torch

from .optimizer import _OneTensorOptimizer, _step_tensor, _use_grad, _value

__all__ = ["Adafactor", "Muon", "SparseAdam"]


class Adafactor(_OneTensorOptimizer):
    """Adafactor: Adam-like steps with factored second moments for matrices
    (torch.optim.Adafactor)."""

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        if isinstance(lr, torch.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= _value(lr):
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize))

    def __setstate__(self, state):
        super().__setstate__(state)
        self._fill_group_defaults(foreach=None)

    def _init_state(self, group, p, state):
        if p.is_complex():
            raise RuntimeError("Adafactor does not support complex parameters")
        state["step"] = _step_tensor()
        if p.grad.dim() > 1:
            shape = list(p.grad.shape)
            state["row_var"] = p.grad.new_zeros(shape[:-1] + [1])
            state["col_var"] = p.grad.new_zeros(shape[:-2] + [1, shape[-1]])
        else:
            state["variance"] = torch.zeros_like(p.grad)

    @_use_grad
    def step(self, closure=None):
        """One Adafactor step over every parameter with a gradient; returns
        closure()'s loss when a closure is given."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            eps1 = group["eps"][0]  # None: the first parameter's dtype epsilon, kept for the group (torch's)
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.is_complex():
                    raise RuntimeError("Adafactor does not support complex parameters")
                state = self.state[p]
                if len(state) == 0:
                    self._init_state(group, p, state)
                if eps1 is None:
                    eps1 = torch.finfo(p.dtype).eps
                self._update(group, p, state, eps1)
        return loss

    def _update(self, group, p, state, eps1):
        lr, d, wd = group["lr"], group["d"], group["weight_decay"]
        if isinstance(lr, torch.Tensor):  # a tensor lr stays one, so alpha is rounded to its dtype (torch's)
            lr = lr.reshape(())
        g = -p.grad if group["maximize"] else p.grad
        state["step"] += 1
        t = float(_value(state["step"]))
        new_weight = t ** group["beta2_decay"]
        rho = min(lr, 1 / t ** 0.5)
        alpha = max(group["eps"][1], p.norm(2).item() / p.numel() ** 0.5) * rho
        if wd != 0:
            p.mul_(float(_value(1 - lr * wd)))
        if g.dim() > 1:
            row, col = state["row_var"], state["col_var"]
            g2 = g * g
            row.lerp_(g2.mean(dim=-1, keepdim=True), new_weight)
            col.lerp_(g2.mean(dim=-2, keepdim=True), new_weight)
            var = (row @ col) / row.mean(dim=-2, keepdim=True).clamp(min=eps1)
        else:
            state["variance"].lerp_(g * g, new_weight)
            var = state["variance"]
        update = var.clamp(min=eps1 * eps1).rsqrt() * g
        denom = max(1.0, update.norm(2).item() / (update.numel() ** 0.5 * d))
        p.add_(update, alpha=float(_value(-alpha / denom)))


# ---- Muon ----------------------------------------------------------------------------

_NS_MAX_STEPS = 100


def _newton_schulz(g, coefficients, steps, eps):
    """The quintic Newton-Schulz iteration X <- a X + (b A + c A^2) X, A = X X^T,
    from X = G / |G|_F (in bfloat16, on the wide orientation): an approximate
    U V^T of G's SVD (singular values pushed into roughly [0.5, 1.5])."""
    if steps >= _NS_MAX_STEPS:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if g.dim() != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = coefficients
    tall = g.size(0) > g.size(1)
    x = g.to(torch.bfloat16).clone()
    if tall:
        x = x.T
    x = x / x.norm().clamp(min=eps)
    for _ in range(steps):
        gram = x @ x.T
        x = torch.addmm(x, torch.addmm(gram, gram, gram, beta=b, alpha=c), x, beta=a)
    return x.T if tall else x


def _adjusted_lr(lr, how, shape):
    rows, cols = shape[:2]
    if how is None or how == "original":
        return lr * math.sqrt(max(1, rows / cols))
    if how == "match_rms_adamw":
        return lr * 0.2 * math.sqrt(max(rows, cols))
    if how == "spectral_unclamped":
        return lr * math.sqrt(rows / cols)
    return lr


class Muon(_OneTensorOptimizer):
    """Muon: momentum SGD whose 2-D updates are orthogonalised by Newton-Schulz
    (torch.optim.Muon); for the weight matrices of hidden layers only."""

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(3.4445, -4.7750, 2.0315), eps=1e-7, ns_steps=5, adjust_lr_fn=None):
        if isinstance(lr, torch.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= _value(lr):
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw", "spectral_unclamped"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                                      ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps,
                                      adjust_lr_fn=adjust_lr_fn))
        for group in self.param_groups:
            for p in group["params"]:
                if p.dim() != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a parameter with "
                                     f"size: {p.size()}")

    def _init_state(self, group, p, state):
        if p.is_complex():
            raise RuntimeError("Muon does not support complex parameters")
        state["momentum_buffer"] = torch.zeros_like(p.grad)

    def _update(self, group, p, state):
        lr, mu = float(_value(group["lr"])), group["momentum"]
        g = p.grad
        if g.dim() != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        buf = state["momentum_buffer"]
        buf.lerp_(g, 1 - mu)
        update = g.lerp(buf, mu) if group["nesterov"] else buf
        update = _newton_schulz(update, group["ns_coefficients"], group["ns_steps"], group["eps"])
        p.mul_(1 - lr * group["weight_decay"])
        p.add_(update.to(p.dtype), alpha=-_adjusted_lr(lr, group["adjust_lr_fn"], p.shape))


class SparseAdam:
    """torch.optim.SparseAdam: Adam for sparse gradients. pycuda_sem has no
    sparse tensors, so constructing one raises NotImplementedError."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        raise NotImplementedError("optim.SparseAdam is not available in pycuda_sem: it needs sparse "
                                  "gradients, and pycuda_sem has no sparse tensors (use Adam)")
