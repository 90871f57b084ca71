"""torch.utils: hooks (RemovableHandle)."""
