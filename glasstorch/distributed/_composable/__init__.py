"""torch.distributed._composable: the older home of fully_shard."""
