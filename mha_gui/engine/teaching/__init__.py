"""The numbers behind the teaching views and exercises: explain and quoted_cells (a
cell's worked formula), neuron, contributions, token_lines, difference, identities and
identity_parts, exercises, training (training_loss, training_targets), and the measured
roles of real heads (head_roles, model_roles, classroom)."""
