package pricing

// TaxPercent is the sales tax.
const TaxPercent = 8

// AddTax adds sales tax to cents.
func AddTax(cents int) int { return cents + cents*TaxPercent/100 }
