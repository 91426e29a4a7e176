"""The papers' own figures, measured on this lab's models: ``python -m transformer_lab.papers``.

Each figure is a measurement at (or just after) initialisation, seconds to minutes of
forward and backward passes, not a training compared across runs: so a command that draws
the lab's curves beside the shape the paper states, with seeds and intervals, rather than
a bundled experiment (a sweep of job folders and a report for what one process measures
in place). docs/papers.md quotes what each paper says; docs/results.md says where the
lab's figure agrees.

- ``xiong_fig3``: Xiong et al. (2020), §3.4, Figure 3: the gradient norm of each layer's
  FFN W2 at initialisation, post- vs pre-norm, and the last layer's against depth.
- ``deepnet_update``: Wang et al. (2022, DeepNet), §3, Figure 4 and §4.2, Figure 5: the
  size of the model update over the first steps (by depth in Figure 5), and the decoder's
  gradient by layer after them (Figure 4(d)).
- ``deepnet_bound``: the same paper's §4.2-4.3 and Figure 5 as a test with a rule fixed before
  its runs: is DeepNorm's model update nearly constant in depth and Post-LN's growing, under
  one SGD step (the theorem's setting) and under AdamW's first steps?
"""
