print("vault-server: not yet")
