"""Backend switches, as torch.backends (filled in by the compute work)."""
