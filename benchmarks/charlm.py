"""The chapter's character language model, for timing only.

When the book's own ``CharLM`` has been saved into d2l_mini (``d2l.CharLM``),
the benchmark uses it; until then it uses these stand-ins of the same design:
pre-norm blocks with RMSNorm, d2l_mini's MultiHeadAttention under a causal
mask, a SwiGLU feed-forward of width round(8d/3), learned positions, a final
RMSNorm and an output head tied to the token embedding.
"""


def torch_charlm(d2l, vocab_size, num_hiddens=128, num_heads=4, num_blks=2,
                 max_len=128):
    if hasattr(d2l, 'CharLM'):
        return d2l.CharLM(vocab_size, num_hiddens=num_hiddens,
                          num_heads=num_heads, num_blks=num_blks,
                          max_len=max_len)
    import torch
    from torch import nn
    from torch.nn import functional as F

    class SwiGLU(nn.Module):
        def __init__(self, d):
            super().__init__()
            width = round(8 * d / 3)
            self.W_g = nn.Linear(d, width, bias=False)
            self.W_1 = nn.Linear(d, width, bias=False)
            self.W_2 = nn.Linear(width, d, bias=False)

        def forward(self, X):
            return self.W_2(F.silu(self.W_g(X)) * self.W_1(X))

    class Block(nn.Module):
        def __init__(self, d, h):
            super().__init__()
            self.norm1, self.norm2 = nn.RMSNorm(d), nn.RMSNorm(d)
            self.attention = d2l.MultiHeadAttention(d, h)
            self.ffn = SwiGLU(d)

        def forward(self, X, valid_lens):
            Y = self.norm1(X)
            X = X + self.attention(Y, Y, Y, valid_lens)
            return X + self.ffn(self.norm2(X))

    class CharLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.token_emb = nn.Embedding(vocab_size, num_hiddens)
            self.pos_emb = nn.Embedding(max_len, num_hiddens)
            for emb in (self.token_emb, self.pos_emb):
                nn.init.normal_(emb.weight, std=0.02)
            self.blks = nn.ModuleList([Block(num_hiddens, num_heads)
                                       for _ in range(num_blks)])
            self.norm = nn.RMSNorm(num_hiddens)

        def forward(self, X):
            B, T = X.shape
            H = self.token_emb(X) + self.pos_emb(
                torch.arange(T, device=X.device))
            causal = torch.arange(1, T + 1, device=X.device).repeat(B, 1)
            for blk in self.blks:
                H = blk(H, causal)
            return F.linear(self.norm(H), self.token_emb.weight)

    return CharLM()


def jax_charlm(d2l, vocab_size, num_hiddens=128, num_heads=4, num_blks=2,
               max_len=128, seed=0):
    from flax import nnx
    if hasattr(d2l, 'CharLM'):
        return d2l.CharLM(vocab_size, num_hiddens=num_hiddens,
                          num_heads=num_heads, num_blks=num_blks,
                          max_len=max_len, rngs=nnx.Rngs(seed))
    from jax import numpy as jnp

    class SwiGLU(nnx.Module):
        def __init__(self, d, rngs):
            width = round(8 * d / 3)
            self.W_g = nnx.Linear(d, width, use_bias=False, rngs=rngs)
            self.W_1 = nnx.Linear(d, width, use_bias=False, rngs=rngs)
            self.W_2 = nnx.Linear(width, d, use_bias=False, rngs=rngs)

        def __call__(self, X):
            return self.W_2(nnx.silu(self.W_g(X)) * self.W_1(X))

    class Block(nnx.Module):
        def __init__(self, d, h, rngs):
            self.norm1 = nnx.RMSNorm(d, rngs=rngs)
            self.norm2 = nnx.RMSNorm(d, rngs=rngs)
            self.attention = d2l.MultiHeadAttention(d, h, rngs=rngs)
            self.ffn = SwiGLU(d, rngs)

        def __call__(self, X, valid_lens):
            Y = self.norm1(X)
            X = X + self.attention(Y, Y, Y, valid_lens)[0]
            return X + self.ffn(self.norm2(X))

    class CharLM(nnx.Module):
        def __init__(self, rngs):
            init = nnx.initializers.normal(0.02)
            self.token_emb = nnx.Embed(vocab_size, num_hiddens,
                                       embedding_init=init, rngs=rngs)
            self.pos_emb = nnx.Embed(max_len, num_hiddens,
                                     embedding_init=init, rngs=rngs)
            self.blks = nnx.List([Block(num_hiddens, num_heads, rngs)
                                  for _ in range(num_blks)])
            self.norm = nnx.RMSNorm(num_hiddens, rngs=rngs)

        def __call__(self, X):
            B, T = X.shape
            H = self.token_emb(X) + self.pos_emb(jnp.arange(T))
            causal = jnp.tile(jnp.arange(1, T + 1), (B, 1))
            for blk in self.blks:
                H = blk(H, causal)
            return self.token_emb.attend(self.norm(H))

    return CharLM(nnx.Rngs(seed))
