"""dream: orient → gather → consolidate → prune compute a plan; apply() carries it out."""
