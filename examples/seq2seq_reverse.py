"""Sequence-to-sequence patterns: nn.Transformer as an encoder-decoder that learns to
reverse digit strings, pad_sequence for ragged batches, key-padding masks and the causal
target mask, cross_entropy with ignore_index and label_smoothing, a Noam warmup schedule
through LambdaLR, gradient clipping, greedy decoding under torch.no_grad, and exact-match
accuracy.

An ordinary PyTorch script: run it with `python examples/run_as_torch.py examples/seq2seq_reverse.py`
and `import torch` resolves to pycuda_sem; run it with plain python for real torch."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence

PAD, BOS, EOS, VOCAB = 0, 1, 2, 13  # digits are tokens 3..12


def make_batch(n, gen, device):
    lens = torch.randint(3, 8, (n,), generator=gen)
    src = [torch.randint(3, VOCAB, (int(k),), generator=gen) for k in lens]
    tgt = [torch.cat([torch.tensor([BOS]), s.flip(0), torch.tensor([EOS])]) for s in src]
    return (pad_sequence(src, batch_first=True, padding_value=PAD).to(device),
            pad_sequence(tgt, batch_first=True, padding_value=PAD).to(device))


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=64):
        super().__init__()
        pos = torch.arange(max_len).unsqueeze(1)
        div = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2] = torch.sin(pos * div)
        pe[:, 1::2] = torch.cos(pos * div)
        self.register_buffer("pe", pe)

    def forward(self, x):
        return x + self.pe[: x.size(1)]


class Seq2Seq(nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.d = d
        self.emb = nn.Embedding(VOCAB, d, padding_idx=PAD)
        self.pos = PositionalEncoding(d)
        self.tf = nn.Transformer(d, nhead=4, num_encoder_layers=2, num_decoder_layers=2,
                                 dim_feedforward=64, dropout=0.0, batch_first=True)
        self.out = nn.Linear(d, VOCAB)

    def forward(self, src, tgt_in):
        causal = nn.Transformer.generate_square_subsequent_mask(tgt_in.size(1), device=src.device)
        h = self.tf(self.pos(self.emb(src) * math.sqrt(self.d)), self.pos(self.emb(tgt_in) * math.sqrt(self.d)),
                    tgt_mask=causal, src_key_padding_mask=src == PAD, tgt_key_padding_mask=tgt_in == PAD,
                    memory_key_padding_mask=src == PAD)
        return self.out(h)

    @torch.no_grad()
    def greedy(self, src, max_len=10):
        ys = torch.full((src.size(0), 1), BOS, dtype=torch.long, device=src.device)
        for _ in range(max_len):
            nxt = self(src, ys)[:, -1].argmax(-1, keepdim=True)
            ys = torch.cat([ys, nxt], dim=1)
        return ys


device = 'cuda' if torch.cuda.is_available() else 'cpu'
torch.manual_seed(0)
gen = torch.Generator().manual_seed(0)
model = Seq2Seq().to(device)
opt = torch.optim.Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
warmup = 60
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 32 ** -0.5 * min((s + 1) ** -0.5, (s + 1) * warmup ** -1.5))
for step in range(700):
    src, tgt = make_batch(32, gen, device)
    logits = model(src, tgt[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), tgt[:, 1:].reshape(-1), ignore_index=PAD, label_smoothing=0.1)
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
model.eval()
src, tgt = make_batch(64, gen, device)
out = model.greedy(src, max_len=tgt.size(1) - 1)
mask = tgt[:, 1:] != PAD
tok_acc = ((out[:, 1:tgt.size(1)] == tgt[:, 1:]) & mask).sum().item() / mask.sum().item()
print('loss %.3f token accuracy %.3f' % (loss.item(), tok_acc))
assert tok_acc > 0.6, tok_acc
print('ok')
