"""Frontend passes: the outlining of ``with`` regions into functions (PyPTO's passes 7–9)."""

from ptoc.passes.frontend.outline_hierarchy_scopes import outline_hierarchy_scopes
from ptoc.passes.frontend.outline_incore_scopes import outline_incore_scopes
from ptoc.passes.frontend.outline_cluster_scopes import outline_cluster_scopes

__all__ = ["outline_cluster_scopes", "outline_hierarchy_scopes", "outline_incore_scopes"]
