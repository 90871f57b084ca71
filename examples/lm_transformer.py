"""Language-model training patterns: nn.TransformerEncoder with a sinusoidal position
buffer and a causal mask, gradient clipping, StepLR; then a GPT-style block with
scaled_dot_product_attention(is_causal=True), weight tying, AdamW parameter groups,
cosine LR, gradient accumulation under autocast with GradScaler, and top-k sampling.

An ordinary PyTorch script: run it with `python examples/run_as_torch.py examples/lm_transformer.py`
and `import torch` resolves to pycuda_sem; run it with plain python for real torch."""
import math, time
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import TransformerEncoder, TransformerEncoderLayer

class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=512):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, 1, d_model)
        pe[:, 0, 0::2] = torch.sin(position * div_term)
        pe[:, 0, 1::2] = torch.cos(position * div_term)
        self.register_buffer('pe', pe)
    def forward(self, x):
        x = x + self.pe[:x.size(0)]
        return self.dropout(x)

class TransformerModel(nn.Module):
    def __init__(self, ntoken, d_model, nhead, d_hid, nlayers, dropout=0.2):
        super().__init__()
        self.model_type = 'Transformer'
        self.pos_encoder = PositionalEncoding(d_model, dropout)
        encoder_layers = TransformerEncoderLayer(d_model, nhead, d_hid, dropout)
        self.transformer_encoder = TransformerEncoder(encoder_layers, nlayers, enable_nested_tensor=False)
        self.embedding = nn.Embedding(ntoken, d_model)
        self.d_model = d_model
        self.linear = nn.Linear(d_model, ntoken)
        self.init_weights()
    def init_weights(self):
        initrange = 0.1
        self.embedding.weight.data.uniform_(-initrange, initrange)
        self.linear.bias.data.zero_()
        self.linear.weight.data.uniform_(-initrange, initrange)
    def forward(self, src, src_mask=None):
        src = self.embedding(src) * math.sqrt(self.d_model)
        src = self.pos_encoder(src)
        if src_mask is None:
            src_mask = nn.Transformer.generate_square_subsequent_mask(len(src)).to(src.device)
        output = self.transformer_encoder(src, src_mask)
        return self.linear(output)

class GPTBlock(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.proj = nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(approximate='tanh'), nn.Linear(4 * d, d))
        self.h = h
    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        q = q.view(B, T, self.h, C // self.h).transpose(1, 2)
        k = k.view(B, T, self.h, C // self.h).transpose(1, 2)
        v = v.view(B, T, self.h, C // self.h).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        x = x + self.proj(y)
        return x + self.mlp(self.ln2(x))

torch.manual_seed(0)
device = 'cuda' if torch.cuda.is_available() else 'cpu'
ntokens = 50
model = TransformerModel(ntokens, 32, 2, 64, 2, 0.1).to(device)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=5.0)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.95)
data = torch.randint(0, ntokens, (200, 4), device=device)
bptt = 16
model.train()
for i in range(0, data.size(0) - 1 - bptt, bptt):
    src, tgt = data[i:i + bptt], data[i + 1:i + 1 + bptt].reshape(-1)
    output = model(src)
    loss = criterion(output.view(-1, ntokens), tgt)
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    optimizer.step()
print('ppl', math.exp(loss.item()))
scheduler.step()

# nanoGPT-ish with AdamW param groups, cosine LR, grad accumulation, autocast
blocks = nn.Sequential(*[GPTBlock(32, 4) for _ in range(2)]).to(device)
emb = nn.Embedding(ntokens, 32).to(device)
head = nn.Linear(32, ntokens, bias=False).to(device)
head.weight = emb.weight  # weight tying
params = [p for m in (blocks, emb) for p in m.parameters()]
decay = [p for p in params if p.dim() >= 2]
nodecay = [p for p in params if p.dim() < 2]
opt = torch.optim.AdamW([{'params': decay, 'weight_decay': 0.1}, {'params': nodecay, 'weight_decay': 0.0}], lr=3e-3, betas=(0.9, 0.95), fused=device == 'cuda')
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
scaler = torch.amp.GradScaler(device, enabled=(device == 'cuda'))
ctx = torch.autocast(device_type=device, dtype=torch.bfloat16) if device == 'cuda' else torch.autocast(device_type='cpu', dtype=torch.bfloat16, enabled=False)
x = torch.randint(0, ntokens, (4, 16), device=device)
for step in range(10):
    for micro in range(2):
        with ctx:
            logits = head(blocks(emb(x[:, :-1])))
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), x[:, 1:].reshape(-1), ignore_index=-1)
            loss = loss / 2
        scaler.scale(loss).backward()
    scaler.unscale_(opt)
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    scaler.step(opt)
    scaler.update()
    opt.zero_grad(set_to_none=True)
    sched.step()
print('gpt loss', loss.item() * 2, sched.get_last_lr())
# sampling
with torch.no_grad():
    idx = x[:, :4]
    for _ in range(5):
        logits = head(blocks(emb(idx)))[:, -1, :] / 0.8
        v, _ = torch.topk(logits, 10)
        logits[logits < v[:, [-1]]] = -float('Inf')
        probs = F.softmax(logits, dim=-1)
        idx = torch.cat((idx, torch.multinomial(probs, num_samples=1)), dim=1)
print(idx.shape, 'ok')
