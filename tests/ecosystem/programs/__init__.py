"""One program per library; each module registers its cases with ``_support.case``."""
