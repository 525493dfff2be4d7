"""Test and benchmark support for the core and for everything that folds core state (no pytest
import): event builders (`builders`), an in-process platform (`loop`) and a synthetic ground truth
for the classification engine (`synthetic`), the small cluster world of decision tests (`world`).
Nothing in the product imports this package."""
