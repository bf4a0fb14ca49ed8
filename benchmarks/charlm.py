"""The chapter's character language model, for timing only.

The benchmark times the book's own ``CharLM`` (saved into d2l_mini from the
chapter as ``d2l.CharLM``). Until the chapter's code has been saved, it times a
stand-in of the same shape and cost: pre-norm blocks with RMSNorm, d2l_mini's
MultiHeadAttention under a causal mask, a SwiGLU feed-forward of width
round(8d/3), learned positions, a final RMSNorm and an output head that reuses
the token embedding.
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

    class PreNormLayer(nn.Module):
        def __init__(self):
            super().__init__()
            width = round(8 * num_hiddens / 3)
            self.attn_norm = nn.RMSNorm(num_hiddens, eps=1e-6)
            self.attention = d2l.MultiHeadAttention(num_hiddens, num_heads)
            self.ffn_norm = nn.RMSNorm(num_hiddens, eps=1e-6)
            self.gate = nn.Linear(num_hiddens, width, bias=False)
            self.up = nn.Linear(num_hiddens, width, bias=False)
            self.down = nn.Linear(width, num_hiddens, bias=False)

        def forward(self, stream, lens):
            x = self.attn_norm(stream)
            stream = stream + self.attention(x, x, x, lens)
            x = self.ffn_norm(stream)
            return stream + self.down(F.silu(self.gate(x)) * self.up(x))

    class StandInLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab_size, num_hiddens)
            nn.init.normal_(self.embed.weight, std=0.02)
            self.position = nn.Parameter(
                0.02 * torch.randn(max_len, num_hiddens))
            self.layers = nn.ModuleList(PreNormLayer()
                                        for _ in range(num_blks))
            self.final_norm = nn.RMSNorm(num_hiddens, eps=1e-6)

        def forward(self, tokens):
            batch, steps = tokens.shape
            stream = self.embed(tokens) + self.position[:steps]
            lens = torch.arange(1, steps + 1, device=tokens.device)
            lens = lens.expand(batch, steps)
            for layer in self.layers:
                stream = layer(stream, lens)
            return self.final_norm(stream) @ self.embed.weight.T

    return StandInLM()


def jax_charlm(d2l, vocab_size, num_hiddens=128, num_heads=4, num_blks=2,
               max_len=128, seed=0):
    import jax
    from jax import numpy as jnp
    from flax import nnx
    rngs = nnx.Rngs(seed)
    if hasattr(d2l, 'CharLM'):
        return d2l.CharLM(vocab_size, num_hiddens=num_hiddens,
                          num_heads=num_heads, num_blks=num_blks,
                          max_len=max_len, rngs=rngs)

    class PreNormLayer(nnx.Module):
        def __init__(self):
            width = round(8 * num_hiddens / 3)
            dense = lambda i, o: nnx.Linear(i, o, use_bias=False, rngs=rngs)
            self.attn_norm = nnx.RMSNorm(num_hiddens, epsilon=1e-6,
                                         rngs=rngs)
            self.attention = d2l.MultiHeadAttention(num_hiddens, num_heads,
                                                    rngs=rngs)
            self.ffn_norm = nnx.RMSNorm(num_hiddens, epsilon=1e-6,
                                        rngs=rngs)
            self.gate = dense(num_hiddens, width)
            self.up = dense(num_hiddens, width)
            self.down = dense(width, num_hiddens)

        def __call__(self, stream, lens):
            x = self.attn_norm(stream)
            stream = stream + self.attention(x, x, x, lens)[0]
            x = self.ffn_norm(stream)
            return stream + self.down(nnx.silu(self.gate(x)) * self.up(x))

    class StandInLM(nnx.Module):
        def __init__(self):
            self.embed = nnx.Embed(
                vocab_size, num_hiddens,
                embedding_init=nnx.initializers.normal(0.02), rngs=rngs)
            self.position = nnx.Param(0.02 * jax.random.normal(
                rngs.params(), (max_len, num_hiddens)))
            self.layers = nnx.List([PreNormLayer() for _ in range(num_blks)])
            self.final_norm = nnx.RMSNorm(num_hiddens, epsilon=1e-6,
                                          rngs=rngs)

        def __call__(self, tokens):
            batch, steps = tokens.shape
            stream = self.embed(tokens) + self.position[:steps]
            lens = jnp.broadcast_to(jnp.arange(1, steps + 1), (batch, steps))
            for layer in self.layers:
                stream = layer(stream, lens)
            return self.embed.attend(self.final_norm(stream))

    return StandInLM()
