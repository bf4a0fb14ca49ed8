"""d2l_mini: the small library that every section of the book imports.

``from d2l_mini import torch as d2l`` or ``from d2l_mini import jax as d2l``;
each imports only its own framework. The two are twins: the same names, in the
same order, for the same roles (attention, the chapter's saved FeedForward,
TransformerBlock, CharLM and generate, the Time Machine data, ``train_lm``).
Both ``MultiHeadAttention`` classes return ``(output, weights)``, as PyTorch's
own ``nn.MultiheadAttention`` does and as a function compiled by ``jax.jit``
must (it hands results back only through what it returns).

Where the twins differ, and why:

* Flax NNX modules take the source of their random initial weights as a
  required keyword argument, ``rngs=nnx.Rngs(seed)`` (checked like the other
  arguments); PyTorch modules draw from the global generator that
  ``torch.manual_seed`` sets.
* The PyTorch modules define ``extra_repr``, which ``print(model)`` shows;
  Flax NNX has no such hook, so the JAX modules do not.
* ``need_weights``. Both ``MultiHeadAttention`` classes take it (as
  ``nn.MultiheadAttention`` does), and ``TransformerBlock`` passes
  ``need_weights=False``: both then return None for the weights, and both
  hand the switch on to ``dot_product_attention``, which an override takes
  and passes on in the same way. PyTorch's then computes the same output
  with the fused ``F.scaled_dot_product_attention``; JAX's computes it by
  the same steps as before (``jax.nn.dot_product_attention`` is JAX's fused
  counterpart, which the book does not use).
* Training steps. Both ``train_lm`` loops take the lesson's step (forward,
  loss, gradients, update); JAX's is compiled with ``nnx.jit``, and with
  ``micro_batches`` > 1 takes the slices in a ``lax.scan``, which keeps one
  slice's arrays in the CPU's cache at a time (an unrolled loop would not).
  JAX's ``_count_finished`` moves the progress bar without waiting for the
  asynchronously dispatched steps; PyTorch's loop moves it after each step.
  The helper ``_value_and_grad`` returns the loss and leaves the gradient in
  each parameter's ``.grad`` in PyTorch, where ``optimizer.step()`` reads it;
  JAX's returns ``(loss, grads)``, the only way a JAX function hands results
  back.
* Devices. PyTorch's ``train_lm`` moves the model and each batch to
  ``try_gpu()``; JAX puts new arrays on its default device (the first GPU
  where there is one) by itself, so JAX's ``train_lm`` moves nothing.
* JAX's ``generate`` draws each character with ``_sample_next``, compiled
  once for a context padded to ``max_len``; PyTorch's runs the model eagerly.

Importing either module changes nothing in the reader's process: no
environment variable, no matplotlib setting, no IPython hook. ``plot`` and
``use_svg_display`` (which a notebook calls before drawing with matplotlib
itself) select SVG figures and describe each figure in words for the HTML
book's alt text; the build sets its own machine settings in every kernel
(``_config.yml``'s ``kernel_env``).

Framework-free helpers, re-exported by both: ``d2l_mini.data`` (the corpus,
its cache folder, the vocabulary and the windows), ``d2l_mini.plotting``
(``plot``, ``check_shape``), ``d2l_mini.glue`` (values that the prose quotes),
``d2l_mini.progress`` (progress bars) and ``d2l_mini.checks`` (``check_args``,
the argument checks). ``d2l_mini.settings`` reads the book's run-time settings
from the environment.
"""
