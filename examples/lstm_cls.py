"""Sequence-classifier patterns: Embedding with padding_idx, pad_sequence,
pack_padded_sequence(enforce_sorted=False) into a 2-layer bidirectional LSTM,
pad_packed_sequence, the last hidden states of both directions, gradient clipping.

An ordinary PyTorch script: run it with `python examples/run_as_torch.py examples/lstm_cls.py`
and `import torch` resolves to pycuda_sem; run it with plain python for real torch."""
import torch, torch.nn as nn
from torch.nn.utils.rnn import pad_sequence, pack_padded_sequence, pad_packed_sequence
torch.manual_seed(0)
class Clf(nn.Module):
    def __init__(self, vocab=30, emb=8, hid=16, ncls=3):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb, padding_idx=0)
        self.lstm = nn.LSTM(emb, hid, num_layers=2, batch_first=True, bidirectional=True, dropout=0.1)
        self.fc = nn.Linear(2 * hid, ncls)
    def forward(self, x, lengths):
        e = self.emb(x)
        packed = pack_padded_sequence(e, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, (h, c) = self.lstm(packed)
        out, out_lens = pad_packed_sequence(out, batch_first=True)
        feat = torch.cat([h[-2], h[-1]], dim=1)
        return self.fc(feat), out
seqs = [torch.randint(1, 30, (n,)) for n in (5, 3, 7, 2)]
lengths = torch.tensor([len(s) for s in seqs])
x = pad_sequence(seqs, batch_first=True, padding_value=0)
y = torch.tensor([0, 1, 2, 1])
m = Clf(); opt = torch.optim.Adam(m.parameters(), 1e-2)
for step in range(5):
    logits, out = m(x, lengths)
    loss = nn.functional.cross_entropy(logits, y)
    opt.zero_grad(); loss.backward(); nn.utils.clip_grad_norm_(m.parameters(), 1.0); opt.step()
print(loss.item(), out.shape)
gru = nn.GRU(8, 4)
o, h = gru(torch.randn(6, 2, 8)); print(o.shape, h.shape)
print('ok')
