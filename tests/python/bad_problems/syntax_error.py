"""Bad problem: a syntax error on line 9 (the worker must report file and line)."""

import torch
import torch.nn as nn

batch_size = 4
dim = 8

def get_inputs(:
    return [torch.randn(batch_size, dim)]
