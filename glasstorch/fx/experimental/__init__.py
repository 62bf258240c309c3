"""Experimental fx tools (torch.fx.experimental)."""
