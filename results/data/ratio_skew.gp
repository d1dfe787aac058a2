set terminal svg size 960,600 dynamic
set output 'ratio_skew.svg'
set datafile missing '?'
set termoption noenhanced
set key outside right top
set grid
cd '.'
set title "FAST simulated time / lower bound vs Zipf skew\n4 x 8 GPUs, zipf, 128 MiB per GPU, mean of 2 seeds"
set xlabel 'Zipf skew'
set ylabel 'time / bound (LP + latency floor)'
set xrange [-0.04:0.94]
set yrange [0.99348:1.08802]
plot 'ratio_skew_h200.dat' using 1:2 with linespoints lw 2.0 dt 1 pt 5 ps 1.2 lc rgb '#d55e00' title 'h200', 'ratio_skew_mi300x-100g.dat' using 1:2 with linespoints lw 2.0 dt 1 pt 7 ps 1.2 lc rgb '#cc79a7' title 'mi300x-100g', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'bound'
