"""BERT-style fine-tuning patterns: word/position/token-type embeddings with a
non-persistent position_ids buffer, an extended attention mask built with
torch.finfo(dtype).min, GELU feed-forward, BERT's init through Module.apply,
AdamW parameter groups without decay on biases and norms, a linear warmup/decay
schedule through LambdaLR, gradient clipping, and evaluation under no_grad.

An ordinary PyTorch script: run it with `python examples/run_as_torch.py examples/bert_finetune.py`
and `import torch` resolves to pycuda_sem; run it with plain python for real torch."""
import math
import torch
from torch import nn
import torch.nn.functional as F

class Embeddings(nn.Module):
    def __init__(self, vocab, d, max_pos=64):
        super().__init__()
        self.word = nn.Embedding(vocab, d, padding_idx=0)
        self.pos = nn.Embedding(max_pos, d)
        self.tok = nn.Embedding(2, d)
        self.norm = nn.LayerNorm(d, eps=1e-12)
        self.drop = nn.Dropout(0.1)
        self.register_buffer("position_ids", torch.arange(max_pos).expand((1, -1)), persistent=False)
    def forward(self, ids, tt=None):
        pos = self.position_ids[:, :ids.size(1)]
        tt = torch.zeros_like(ids) if tt is None else tt
        return self.drop(self.norm(self.word(ids) + self.pos(pos) + self.tok(tt)))

class SelfAttn(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h, self.dh = h, d // h
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
    def split(self, x):
        return x.view(x.size(0), x.size(1), self.h, self.dh).permute(0, 2, 1, 3)
    def forward(self, x, ext_mask):
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dh) + ext_mask
        probs = nn.functional.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        return self.o(ctx.view(ctx.size()[:-2] + (self.h * self.dh,)))

class Layer(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.attn, self.n1 = SelfAttn(d, h), nn.LayerNorm(d, eps=1e-12)
        self.ff1, self.ff2, self.n2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d), nn.LayerNorm(d, eps=1e-12)
    def forward(self, x, m):
        x = self.n1(x + self.attn(x, m))
        return self.n2(x + self.ff2(F.gelu(self.ff1(x))))

class Bert(nn.Module):
    def __init__(self, vocab=100, d=32, h=4, L=2, ncls=2):
        super().__init__()
        self.emb = Embeddings(vocab, d)
        self.layers = nn.ModuleList(Layer(d, h) for _ in range(L))
        self.pool = nn.Linear(d, d)
        self.cls = nn.Linear(d, ncls)
        self.apply(self._init)
    def _init(self, m):
        if isinstance(m, nn.Linear):
            m.weight.data.normal_(mean=0.0, std=0.02)
            if m.bias is not None:
                m.bias.data.zero_()
        elif isinstance(m, nn.Embedding):
            m.weight.data.normal_(mean=0.0, std=0.02)
            if m.padding_idx is not None:
                m.weight.data[m.padding_idx].zero_()
        elif isinstance(m, nn.LayerNorm):
            m.bias.data.zero_(); m.weight.data.fill_(1.0)
    def forward(self, ids, mask, labels=None):
        x = self.emb(ids)
        ext = (1.0 - mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        for layer in self.layers:
            x = layer(x, ext)
        logits = self.cls(torch.tanh(self.pool(x[:, 0])))
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1)) if labels is not None else None
        return loss, logits

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = Bert().to(device)
ids = torch.randint(1, 100, (8, 12), device=device); ids[:, 9:] = 0
mask = (ids != 0).long()
labels = torch.randint(0, 2, (8,), device=device)
no_decay = ["bias", "LayerNorm.weight", "norm.weight"]
groups = [{"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)], "weight_decay": 0.01},
          {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)], "weight_decay": 0.0}]
opt = torch.optim.AdamW(groups, lr=5e-4, eps=1e-8)
total, warm = 10, 2
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: s / max(1, warm) if s < warm else max(0.0, (total - s) / max(1, total - warm)))
for step in range(total):
    model.train()
    loss, logits = model(ids, mask, labels)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step(); sched.step(); model.zero_grad()
model.eval()
with torch.no_grad():
    _, logits = model(ids, mask)
    preds = torch.argmax(logits, dim=1)
    acc = (preds == labels).float().mean().item()
print('loss %.4f acc %.2f lr %.2e' % (loss.item(), acc, sched.get_last_lr()[0]))
print('ok')
