"""glasstorch.version: which glasstorch this is and which torch release it follows."""

__version__ = "0.1.0+torch2.13"
torch_spec = "2.13.0"
cuda = None
hip = None
git_version = "unknown"
debug = False
