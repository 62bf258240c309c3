"""Calls torch.<argv[1]> (a torch function glasstorch lacks): must fail naming it."""

import sys

import torch

print("before", torch.ones(2).sum().item())
getattr(torch, sys.argv[1])(torch.ones(2))
