"""More torch-level spellings of nn.functional (torch.kl_div,
torch.binary_cross_entropy_with_logits, torch.poisson_nll_loss, ...), with
aten's argument orders: the loss reduction is aten's int (0 'none', 1 'mean',
2 'sum') and comes last, optional arguments sit where aten puts them;
dropout_ works in place. Each is a thin forward to F, so the two can never
disagree.

Not here: torch.embedding_bag (aten's returns four tensors, offset2bag,
bag_size and max_indices among them), torch.adaptive_max_pool1d (aten's
always returns the indices, which F cannot give yet), torch.pdist (no F.pdist
yet) and the alpha/feature dropouts (not in F yet)."""
import builtins

from . import _C

_REDUCTIONS = ("none", "mean", "sum")


def _reduction(fname, r):
    if isinstance(r, builtins.bool) or not isinstance(r, builtins.int):
        raise TypeError("%s(): argument 'reduction' must be int, not %s" % (fname, type(r).__name__))
    if not 0 <= r <= 2:
        raise ValueError("%s(): reduction must be 0 (none), 1 (mean) or 2 (sum), got %d" % (fname, r))
    return _REDUCTIONS[r]


def functions():
    """{name: function}; nn.functional loads late, so this runs after it."""
    from .nn import functional as F

    def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=1):
        """F.binary_cross_entropy_with_logits in aten's order (weight,
        pos_weight, then the int reduction)."""
        return F.binary_cross_entropy_with_logits(
            input, target, weight, reduction=_reduction("binary_cross_entropy_with_logits", reduction),
            pos_weight=pos_weight)

    def kl_div(input, target, reduction=1, *, log_target=False):
        """F.kl_div with an int reduction (no 'batchmean' at this level, as
        aten, so without F's warning about 'mean')."""
        import warnings
        red = _reduction("kl_div", reduction)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return F.kl_div(input, target, reduction=red, log_target=log_target)

    def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=1):
        return F.margin_ranking_loss(input1, input2, target, margin,
                                     reduction=_reduction("margin_ranking_loss", reduction))

    def hinge_embedding_loss(input, target, margin=1.0, reduction=1):
        return F.hinge_embedding_loss(input, target, margin, reduction=_reduction("hinge_embedding_loss", reduction))

    def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=1):
        return F.cosine_embedding_loss(input1, input2, target, margin,
                                       reduction=_reduction("cosine_embedding_loss", reduction))

    def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, reduction=1):
        return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                     reduction=_reduction("triplet_margin_loss", reduction))

    def poisson_nll_loss(input, target, log_input, full, eps, reduction):
        """aten's poisson_nll_loss: every argument required."""
        return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                                  reduction=_reduction("poisson_nll_loss", reduction))

    def channel_shuffle(input, groups):
        return F.channel_shuffle(input, groups)

    def dropout_(input, p, train):
        """torch.dropout_: input's elements zeroed (and the rest scaled) in
        place when train is True."""
        if not isinstance(input, _C.Tensor):
            raise TypeError("dropout_(): argument 'input' (position 1) must be Tensor, not %s"
                            % type(input).__name__)
        return F.dropout(input, p, train, inplace=True)

    return {fn.__name__: fn for fn in (
        binary_cross_entropy_with_logits, kl_div, margin_ranking_loss, hinge_embedding_loss,
        cosine_embedding_loss, triplet_margin_loss, poisson_nll_loss, channel_shuffle, dropout_)}
